//! Foot sliding of a 50 % walk/run blend, with and without phase sync, on
//! the built-in character, Fox and RobotExpressive (see
//! `vkskin::character::foot_slide` for the measure). Prints the foot-sliding
//! table; each clip alone is the baseline.
//!
//! Run: `cargo bench --bench foot_slide` (Fox and RobotExpressive need
//! ../shared/assets; without it only the built-in character is measured).

use std::path::PathBuf;
use vkskin::asset::{Model, load, load_default_character};
use vkskin::character::foot_slide::{FootSlideSetup, measure};

/// Model, walk clip, run clip, left and right foot joints.
const CASES: &[(&str, &str, &str, &str, &str)] = &[
    ("built-in", "Walk", "Run", "Foot.L", "Foot.R"),
    ("Fox/Fox.glb", "Walk", "Run", "b_LeftFoot01_017", "b_RightFoot01_021"),
    ("RobotExpressive/RobotExpressive.glb", "Walking", "Running", "Foot.L", "Foot.R"),
];

/// Seconds measured per row.
const SECONDS: f64 = 20.0;

/// The skin joint called `name`.
fn foot(model: &Model, name: &str) -> usize {
    let names = model.skeleton.names();
    let skin_joint = |j: &usize| model.skins.iter().any(|s| s.joints.contains(&(*j as u32)));
    (0..names.len())
        .filter(skin_joint)
        .find(|&j| names[j] == name)
        .unwrap_or_else(|| panic!("no foot {name}"))
}

fn main() {
    let assets = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets");
    println!("slide of the planted feet per cycle: cm (scene units as metres) and % of the ground covered");
    println!("({SECONDS} s at 240 Hz per entry; see vkskin::character::foot_slide)");
    println!(
        "{:<16} {:>16} {:>16} {:>16} {:>16} {:>7}",
        "model", "walk only", "run only", "50 % no sync", "50 % phase sync", "ratio"
    );
    for &(file, walk, run, left, right) in CASES {
        let model = if file == "built-in" {
            load_default_character().expect("built-in character")
        } else {
            match load(&assets.join(file)) {
                Ok(m) => m,
                Err(e) => {
                    println!("{file:<18} skipped: {e}");
                    continue;
                }
            }
        };
        let rig = model.rig.clone();
        let (a, b) = (model.find_clip(walk).expect("walk"), model.find_clip(run).expect("run"));
        let feet = [foot(&model, left), foot(&model, right)];
        let slide = |blend: f32, sync: bool| {
            let setup = FootSlideSetup { a, b, blend, sync, feet, seconds: SECONDS };
            measure(&rig, &setup).expect("measure")
        };
        let cell = |s: &vkskin::character::foot_slide::FootSlide| {
            format!("{:.1} cm {:4.1}%", s.cm_per_cycle, s.share_of_stride * 100.0)
        };
        let (walk_only, run_only) = (slide(0.0, false), slide(1.0, false));
        let (free, synced) = (slide(0.5, false), slide(0.5, true));
        let name = file.split('/').next().unwrap_or(file);
        println!(
            "{name:<16} {:>16} {:>16} {:>16} {:>16} {:>7.2}",
            cell(&walk_only),
            cell(&run_only),
            cell(&free),
            cell(&synced),
            synced.cm_per_cycle / free.cm_per_cycle
        );
    }
}
