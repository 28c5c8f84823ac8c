//! Pose evaluation over every shared model: sampling many times gives finite
//! poses and vertices, and the skinned bind pose reproduces the mesh.

use crate::common::{character_at, find_models, shared_assets};
use nalgebra::Matrix4;
use std::path::PathBuf;
use vkskin::anim::SkinnedPose;
use vkskin::asset::Model;

fn shared_models() -> Vec<PathBuf> {
    let Some(dir) = shared_assets("shared-model pose tests") else { return Vec::new() };
    let out = find_models(&dir);
    assert!(out.len() >= 15, "expected the shared models, found {}", out.len());
    out
}

/// Skins every primitive of every instance with `pose`.
fn skin_all(model: &Model, pose: &SkinnedPose) -> Vec<Vec<[f32; 3]>> {
    let mut out = Vec::new();
    for instance in &model.instances {
        for primitive in &model.meshes[instance.mesh].primitives {
            let mut positions = vec![[0.0; 3]; primitive.vertex_count()];
            let mut normals = primitive.normals.as_ref().map(|n| vec![[0.0; 3]; n.len()]);
            pose.skin_primitive(instance, primitive, &mut positions, normals.as_deref_mut()).unwrap();
            if let Some(normals) = &normals {
                assert!(normals.iter().flatten().all(|v| v.is_finite()), "{}: normal not finite", model.file);
            }
            out.push(positions);
        }
    }
    out
}

#[test]
fn every_model_samples_to_finite_poses_and_vertices() {
    for path in shared_models() {
        let model = vkskin::asset::load(&path).unwrap();
        for (c, clip) in model.clips.iter().enumerate() {
            let (start, end) = (clip.start(), clip.duration);
            for t in [start - 0.1, start, 0.5 * (start + end), end - 1e-3, end, end + 0.37, -1.3] {
                let character = character_at(&model, Some(c), f64::from(t));
                let pose = character.pose();
                let label = format!("{} clip {c} t={t}", path.display());
                assert!(pose.world.iter().all(|m| m.iter().all(|v| v.is_finite())), "{label}: world");
                assert!(pose.morph_weights.iter().all(|w| w.is_finite()), "{label}: weights");
                for positions in skin_all(&model, &pose) {
                    assert!(positions.iter().flatten().all(|v| v.is_finite()), "{label}: vertices");
                }
            }
        }
    }
}

#[test]
fn skinned_bind_pose_reproduces_the_mesh() {
    let models = shared_models();
    if models.is_empty() {
        return; // skipped (or failed under VKSKIN_NO_SKIP) in shared_models
    }
    let mut checked = Vec::new();
    for path in models {
        let model = vkskin::asset::load(&path).unwrap();
        let character = character_at(&model, None, 0.0);
        let pose = character.pose();
        // Only skins whose rest pose is their bind pose (every palette entry
        // the identity) must reproduce the mesh exactly.
        let at_bind_pose = |skin: usize| {
            pose.palette(skin).iter().all(|b| (b.to_matrix() - Matrix4::identity()).abs().max() < 1e-4)
        };
        let skinned = skin_all(&model, &pose);
        let mut k = 0;
        for instance in &model.instances {
            for primitive in &model.meshes[instance.mesh].primitives {
                let positions = &skinned[k];
                k += 1;
                let Some(skin) = instance.skin else { continue };
                let weights = pose.instance_morph_weights(instance);
                if !at_bind_pose(skin) || weights.iter().any(|w| *w != 0.0) {
                    continue;
                }
                let extent =
                    primitive.positions.iter().flatten().fold(0.0f32, |m, v| m.max(v.abs())).max(1e-6);
                for (v, (a, b)) in positions.iter().zip(&primitive.positions).enumerate() {
                    for c in 0..3 {
                        assert!(
                            (a[c] - b[c]).abs() <= 1e-4 * extent,
                            "{}: mesh {} vertex {v}: {a:?} != {b:?}",
                            path.display(),
                            instance.mesh
                        );
                    }
                }
                checked.push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    checked.dedup();
    eprintln!("bind pose reproduced on: {checked:?}");
    // Fox and SimpleSkin rest at their bind pose: if neither is checked,
    // the comparison above compared nothing.
    for expected in ["Fox.glb", "SimpleSkin.gltf"] {
        assert!(checked.iter().any(|c| c == expected), "{expected} was not at its bind pose: {checked:?}");
    }
}

/// Whether `batched`'s world matrices are `expected` and its palettes and
/// morph weights `full`'s, bit for bit.
fn kept_bits_match(
    batched: &vkskin::character::Character,
    full: &vkskin::character::Character,
    expected: &[u32],
) -> bool {
    let (b, f) = (pose_bits(batched), pose_bits(full));
    b.0 == expected && b.1 == f.1 && b.2 == f.2
}

/// Every bit of a character's matrices, palettes and morph weights, and its version.
fn pose_bits(c: &vkskin::character::Character) -> (Vec<u32>, Vec<u32>, Vec<u32>, u64) {
    let pose = c.pose();
    let world = pose.world.iter().flat_map(|m| m.iter().map(|v| v.to_bits())).collect();
    let palettes = pose.palettes.iter().flat_map(|m| m.skin.map(f32::to_bits)).collect();
    let weights = pose.morph_weights.iter().map(|v| v.to_bits()).collect();
    (world, palettes, weights, c.version())
}

/// A crowd's characters, finished eight of one rig at a time in pose
/// batches and keeping no local pose, give bit for bit what each gives
/// updated alone, on every shared model (its skins, shared palettes and
/// hierarchies): eleven characters playing its clips at spread times.
/// Keeping only the world matrices that drawing reads (rigid meshes'),
/// they give the palettes and morph weights of characters that keep them
/// all, and those matrices.
#[test]
fn crowds_of_every_model_pose_each_character_as_alone() {
    use std::sync::Arc;
    use vkskin::character::{AnimationSystem, Character, CharacterId, Controller};
    for path in shared_models() {
        let model = vkskin::asset::load(&path).unwrap();
        if model.clips.is_empty() {
            continue;
        }
        for keeps_world in [true, false] {
            let mut system = AnimationSystem::single_threaded();
            system.set_keeps_local_poses(false);
            system.set_keeps_world_matrices(keeps_world);
            let mut full = Vec::new();
            for i in 0..11 {
                let clip = i % model.clips.len();
                let controller = Arc::new(Controller::single_clip(&model.rig, Some(clip), true).unwrap());
                let id = system.add(model.rig.clone(), controller.clone()).unwrap();
                let start = f64::from(model.clips[clip].duration) * i as f64 / 11.0;
                system.character_mut(id).seek(start);
                full.push(Character::new(model.rig.clone(), controller).unwrap());
                full[i].seek(start);
            }
            // No root motion here: those that rigid meshes read, when not all.
            let kept = system.character(CharacterId(0)).output().world_joints().map(<[u32]>::to_vec);
            let expected = (!keeps_world).then(|| model.rig.rigid_joints());
            assert_eq!(kept, expected, "{}", path.display());
            let mut alone: Vec<_> = system.characters().to_vec();
            for frame in 0..4 {
                system.update(1.0 / 30.0).unwrap();
                for (i, (c, f)) in alone.iter_mut().zip(&mut full).enumerate() {
                    c.update(1.0 / 30.0).unwrap();
                    f.update(1.0 / 30.0).unwrap();
                    let batched = system.character(CharacterId(i));
                    let label = format!(
                        "{} keeping every world matrix {keeps_world}, frame {frame} character {i}",
                        path.display()
                    );
                    assert!(pose_bits(batched) == pose_bits(c), "{label}");
                    // The matrices kept, the palettes and weights: as if all were kept.
                    let expected: Vec<u32> = match &kept {
                        None => pose_bits(f).0,
                        Some(joints) => joints
                            .iter()
                            .flat_map(|&j| f.output().world()[j as usize].iter().map(|v| v.to_bits()))
                            .collect(),
                    };
                    assert!(kept_bits_match(batched, f, &expected), "{label}: as if all kept");
                    if frame == 3 {
                        // Every mesh drawn, rigid ones from the matrices kept.
                        let (b, f) = (skin_all(&model, &batched.pose()), skin_all(&model, &f.pose()));
                        assert!(b == f, "{label}: vertices as if all kept");
                    }
                }
            }
        }
    }
}
