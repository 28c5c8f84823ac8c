//! `dump --controller --skinning gpu` (the compute pass, under validation)
//! against the CPU reference skinning of the same controller frame.

use crate::common::pose_rebuild::dump_controller;
use std::path::PathBuf;

#[test]
fn a_controller_frame_skins_the_same_on_the_gpu() {
    if crate::common::context().is_none() {
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let (model, controller) =
        (root.join("assets/default_character.glb"), root.join("assets/default_character.ron"));
    // A crossfade under the wave, the breathing and the talking face.
    let args = ["--set", "0.5:speed=2", "--set", "0.3:wave", "--set", "0:talk=1", "--time", "0.65"];
    let cpu = dump_controller(&model, &controller, &args);
    let gpu_args = [&args[..], &["--skinning", "gpu", "--validation"]].concat();
    let gpu = dump_controller(&model, &controller, &gpu_args);
    assert_eq!(cpu["clips"], gpu["clips"], "the same frame");
    let in_layer = |l: u64| cpu["clips"].as_array().unwrap().iter().filter(|c| c["layer"] == l).count();
    assert_eq!(in_layer(0), 3, "a crossfade of three clips: {}", cpu["clips"]);
    assert!((1..4).all(|l| in_layer(l) == 1), "wave, breathing and face: {}", cpu["clips"]);
    let positions = |d: &serde_json::Value| -> Vec<f64> {
        d["primitives"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["positions"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
            .collect()
    };
    let (a, b) = (positions(&cpu), positions(&gpu));
    assert_eq!(a.len(), b.len());
    let worst = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
    // The character is about 1.8 m tall: 1e-5 of it.
    assert!(worst < 1.8e-5, "GPU and CPU skinning differ by {worst} m");
}
