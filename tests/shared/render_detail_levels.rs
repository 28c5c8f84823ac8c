//! Detail levels (`render::detail_levels`) of every shared model, edge
//! cases included (morph-only meshes, sparse accessors, unskinned nodes,
//! several skins): each builds without a panic, every list indexes its own
//! primitive's vertices as a triangle list, each level has no more
//! triangles than the one above, and the errors grow with the level and
//! stay within what the caps allow. The skinned characters lose most of
//! their triangles by level 3, Fox too (flat shaded: every face has its
//! own vertices, so its levels come from its welded copies), and all but
//! a sixteenth by the last, where seams no longer hold the simplifier back.
//! RobotExpressive, low-poly machine parts, keeps most of its triangles
//! within the caps.

use crate::common::{find_models, shared_assets};
use vkskin::asset;
use vkskin::render::detail_levels::{DETAIL_LEVELS, DetailLevels};

#[test]
fn every_shared_model_gets_sound_detail_levels() {
    let Some(dir) = shared_assets("detail-level tests") else { return };
    let models = find_models(&dir);
    assert!(models.len() >= 19, "found only {models:?}");
    for path in &models {
        let name = path.strip_prefix(&dir).unwrap().display().to_string();
        let model = asset::load(path).unwrap_or_else(|e| panic!("{e}"));
        let levels = DetailLevels::build(&model);
        let primitives: Vec<_> = model.meshes.iter().flat_map(|m| &m.primitives).collect();
        assert_eq!(levels.primitives.len(), primitives.len(), "{name}");
        let mut triangles = [0usize; DETAIL_LEVELS];
        for (prim, coarser) in primitives.iter().zip(&levels.primitives) {
            let n = prim.vertex_count();
            let mut above = &prim.indices;
            triangles[0] += above.len() / 3;
            for (k, list) in coarser.iter().enumerate() {
                // An empty list draws the level above.
                let list = if list.is_empty() { above } else { list };
                assert_eq!(list.len() % 3, 0, "{name}: level {}", k + 1);
                assert!(list.iter().all(|&i| (i as usize) < n), "{name}: level {} past {n} vertices", k + 1);
                assert!(list.len() <= above.len(), "{name}: level {} grew", k + 1);
                triangles[k + 1] += list.len() / 3;
                above = list;
            }
        }
        let e = levels.error;
        assert_eq!(e[0], 0.0, "{name}");
        assert!(e.windows(2).all(|w| w[0] <= w[1]) && e.iter().all(|x| x.is_finite()), "{name}: {e:?}");
        // Each primitive's error stays within 20 % of its own extent (the
        // last level's cap), so the model's within 20 % of its largest
        // primitive's: at most a fifth of the bounds' diameter, which
        // holds the rest pose and the sampled poses.
        let diameter = 2.0 * levels.bounds[3];
        assert!(
            e[DETAIL_LEVELS - 1] <= 0.2 * diameter.max(1e-6),
            "{name}: {e:?}, bounds {:?}",
            levels.bounds
        );
        eprintln!("{name}: triangles {triangles:?}, errors {e:?}, radius {}", levels.bounds[3]);
        let skinned_character = ["CesiumMan", "Wizard", "Fox"].iter().any(|m| name.starts_with(m));
        if skinned_character {
            assert!(triangles[3] * 4 < triangles[0], "{name}: {triangles:?}");
            assert!(triangles[DETAIL_LEVELS - 1] * 16 < triangles[0], "{name}: {triangles:?}");
        }
    }
}
