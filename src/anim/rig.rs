//! The shared, immutable asset a character animates: skeleton, skins, clips,
//! meshes and the nodes that draw them. Built once per model and shared (by
//! `Arc`) by every character that uses it; nothing in it is per character.
//!
//! It never holds playback state, a GPU resource or a file's bookkeeping
//! (node indices, warnings: see `asset::Model`).

use crate::anim::compression::{self, CompressedClip, CompressionSettings, CompressionStats};
use crate::anim::job::check_len;
use crate::anim::{
    BoneMatrix, Clip, JobError, Mesh, MeshInstance, NO_PARENT, PaletteJob, RotationBlend, RuntimeClip,
    Skeleton, Skin,
};
use nalgebra::Matrix4;
use std::sync::Arc;

/// Largest error [`Rig::morph_weight_tolerances`] allows a morph weight
/// (a 0.1 % change of a normal or tangent delta is not visible).
pub const MAX_WEIGHT_ERROR: f64 = 1e-3;

/// Everything characters of one model share.
#[derive(Debug, Clone)]
pub struct Rig {
    /// Every node of the model as one hierarchy, parent before child.
    pub skeleton: Arc<Skeleton>,
    /// Skins; their `joints` are skeleton indices.
    pub skins: Vec<Skin>,
    /// Meshes.
    pub meshes: Vec<Arc<Mesh>>,
    /// Nodes that draw meshes.
    pub instances: Vec<MeshInstance>,
    /// Clips.
    pub clips: Vec<Arc<Clip>>,
    /// Default morph weights, laid out as `Pose::morph_weights`.
    pub rest_morph_weights: Vec<f32>,
    /// Each skin's run `[start, end)` in a character's concatenated
    /// palettes; skins with the same joints and inverse binds share one
    /// (see [`Rig::palette_ranges`]). Shared with every character's output
    /// (`shared_palette_ranges`).
    palette_ranges: Arc<[[u32; 2]]>,
    /// The skins that own a run, in palette order: the first of each set
    /// of skins that share one.
    palette_skins: Vec<u32>,
    /// Palette entries of all runs together.
    palette_len: u32,
    /// Bind-pose world matrix of each joint some skin lists (`inverse` of
    /// the first listing skin's inverse bind); `None` for other nodes.
    bind_world: Vec<Option<Matrix4<f32>>>,
    /// Display name of each clip: its name, or `animation_N` when unnamed.
    clip_names: Vec<String>,
    /// Each clip laid out for sampling on this skeleton (validated once here).
    runtime_clips: Vec<RuntimeClip>,
    /// Each clip compressed, when characters sample compressed clips (see
    /// [`Rig::compress_clips`]); empty otherwise.
    compressed_clips: Vec<CompressedClip>,
    /// How characters of this rig interpolate LINEAR rotation keys.
    rotation_blend: RotationBlend,
}

impl Rig {
    /// A rig over these parts; checks that skins, instances and clips refer
    /// to joints, meshes and morph slots that exist.
    pub fn new(
        skeleton: Arc<Skeleton>,
        skins: Vec<Skin>,
        meshes: Vec<Arc<Mesh>>,
        instances: Vec<MeshInstance>,
        clips: Vec<Arc<Clip>>,
        rest_morph_weights: Vec<f32>,
    ) -> Result<Self, JobError> {
        let joints = skeleton.len();
        let mut palette_ranges: Vec<[u32; 2]> = Vec::with_capacity(skins.len());
        let mut palette_skins: Vec<u32> = Vec::new();
        let mut total = 0u32;
        for (s, skin) in skins.iter().enumerate() {
            if skin.inverse_binds.len() != skin.joints.len() {
                return Err(JobError::new(format!(
                    "skin {s}: {} inverse binds for {} joints",
                    skin.inverse_binds.len(),
                    skin.joints.len()
                )));
            }
            if let Some(&j) = skin.joints.iter().find(|&&j| j as usize >= joints) {
                return Err(JobError::new(format!("skin {s}: joint {j} outside the skeleton ({joints})")));
            }
            let shared = palette_skins.iter().find(|&&o| same_palette(&skins[o as usize], skin));
            let range = match shared {
                Some(&owner) => palette_ranges[owner as usize],
                None => {
                    let start = total;
                    total = u32::try_from(skin.joints.len())
                        .ok()
                        .and_then(|n| total.checked_add(n))
                        .ok_or_else(|| JobError::new("skins: too many joints"))?;
                    palette_skins.push(s as u32);
                    [start, total]
                }
            };
            palette_ranges.push(range);
        }
        for (i, instance) in instances.iter().enumerate() {
            let morph_end = instance.morph_offset as usize + instance.morph_count as usize;
            if instance.joint as usize >= joints
                || instance.mesh >= meshes.len()
                || instance.skin.is_some_and(|s| s >= skins.len())
                || morph_end > rest_morph_weights.len()
            {
                return Err(JobError::new(format!(
                    "mesh instance {i} refers to a missing joint, mesh, skin or morph slot"
                )));
            }
        }
        for (c, clip) in clips.iter().enumerate() {
            if let Some(t) = clip.joint_tracks.iter().find(|t| t.joint as usize >= joints) {
                return Err(JobError::new(format!(
                    "clip {c}: track of joint {} outside the skeleton",
                    t.joint
                )));
            }
            if let Some(m) = clip
                .morph_tracks
                .iter()
                .find(|m| m.offset as usize + m.count as usize > rest_morph_weights.len())
            {
                return Err(JobError::new(format!(
                    "clip {c}: morph track at slot {} outside the pose",
                    m.offset
                )));
            }
        }
        let mut bind_world = vec![None; joints];
        // The first skin listing a joint wins: with two skins binding one
        // joint differently, the first skin's mesh shows its bind pose and
        // the second shows the difference (palette != identity), which is
        // what the bind-pose view is for.
        for skin in &skins {
            for (&j, ib) in skin.joints.iter().zip(&skin.inverse_binds) {
                if let Some(slot @ None) = bind_world.get_mut(j as usize) {
                    *slot = ib.try_inverse();
                }
            }
        }
        let runtime_clips = clips
            .iter()
            .enumerate()
            .map(|(c, clip)| {
                RuntimeClip::new(clip.clone(), skeleton.rest(), &rest_morph_weights)
                    .map_err(|e| JobError::new(format!("clip {c}: {e}")))
            })
            .collect::<Result<_, _>>()?;
        let clip_names = clips
            .iter()
            .enumerate()
            .map(|(i, c)| c.name.clone().unwrap_or_else(|| format!("animation_{i}")))
            .collect();
        Ok(Rig {
            skeleton,
            skins,
            meshes,
            instances,
            clips,
            rest_morph_weights,
            palette_ranges: palette_ranges.into(),
            palette_skins,
            palette_len: total,
            bind_world,
            clip_names,
            runtime_clips,
            compressed_clips: Vec::new(),
            rotation_blend: RotationBlend::Slerp,
        })
    }

    /// Each skin's run `[start, end)` in a character's concatenated
    /// palettes (see `SkinnedPose::palette_ranges`). Skins with the same
    /// joints and the same inverse binds, bit for bit, share one run: an
    /// exporter that writes a skin per mesh of one armature (Blender:
    /// RobotExpressive's two hands) would otherwise have every character
    /// compute, keep and upload the same matrices twice.
    pub fn palette_ranges(&self) -> &[[u32; 2]] {
        &self.palette_ranges
    }

    /// `palette_ranges`, shared: what a character's output keeps instead
    /// of a copy of its own.
    pub fn shared_palette_ranges(&self) -> Arc<[[u32; 2]]> {
        self.palette_ranges.clone()
    }

    /// The skins whose palettes are computed, one per run, in palette
    /// order (the first of each set of skins that share a run).
    pub fn palette_skins(&self) -> &[u32] {
        &self.palette_skins
    }

    /// Palette entries of all runs together (shared runs counted once).
    pub fn palette_len(&self) -> usize {
        self.palette_len as usize
    }

    /// A character's palettes (`palette_len` entries) from its model
    /// matrices: one [`PaletteJob`] per run, so the skins that share a run
    /// get the same matrices. Never allocates.
    pub fn write_palettes(
        &self,
        models: &[Matrix4<f32>],
        palettes: &mut [BoneMatrix],
    ) -> Result<(), JobError> {
        check_len("palettes", palettes.len(), self.palette_len())?;
        for (skin, range) in self.palette_runs() {
            PaletteJob { skin, models, output: &mut palettes[range] }.run()?;
        }
        Ok(())
    }

    /// The joints whose world matrices drawing reads, ascending: those
    /// placing a mesh drawn without a skin (an unskinned instance, or a
    /// primitive without joints in a skinned one, as
    /// [`SkinnedPose::skin_primitive`](super::SkinnedPose::skin_primitive)
    /// and the GPU skin pass place them). Empty when every mesh is skinned.
    pub fn rigid_joints(&self) -> Vec<u32> {
        let rigid = |instance: &&MeshInstance| {
            let mesh = self.meshes.get(instance.mesh);
            instance.skin.is_none()
                || mesh.is_none_or(|m| m.primitives.iter().any(|p| p.influences.is_none()))
        };
        let mut joints: Vec<u32> =
            self.instances.iter().filter(rigid).map(|instance| instance.joint).collect();
        joints.sort_unstable();
        joints.dedup();
        joints
    }

    /// Each run of the palettes with the skin that fills it (skins that
    /// share a run are not repeated).
    pub fn palette_runs(&self) -> impl Iterator<Item = (&Skin, std::ops::Range<usize>)> + '_ {
        self.palette_skins.iter().map(|&s| {
            let [start, end] = self.palette_ranges[s as usize];
            (&self.skins[s as usize], start as usize..end as usize)
        })
    }

    /// Clip `clip` laid out for sampling (what characters sample). Built
    /// from `clips` when the rig was made.
    pub fn runtime_clip(&self, clip: usize) -> &RuntimeClip {
        &self.runtime_clips[clip]
    }

    /// Compresses every clip within `settings` (see
    /// [`compression::compress_for`]; [`CompressionSettings::for_skeleton`]
    /// is the default bound, 0.01 cm at virtual vertices 3 cm from each
    /// joint; morph weights within [`Rig::morph_weight_tolerances`]),
    /// and from then on characters made for this rig sample the compressed
    /// clips, straight from their bit streams, instead of the runtime clips.
    /// Returns what each clip's compression measured. Characters made
    /// before keep sampling what they sampled when they were made.
    pub fn compress_clips(
        &mut self,
        settings: &CompressionSettings,
    ) -> Result<Vec<CompressionStats>, JobError> {
        let mut compressed = Vec::with_capacity(self.clips.len());
        let mut stats = Vec::with_capacity(self.clips.len());
        let weights = self.morph_weight_tolerances(settings);
        for (c, clip) in self.clips.iter().enumerate() {
            let (clip, s) = compression::compress_for(clip, &self.skeleton, settings, &weights)
                .map_err(|e| JobError::new(format!("clip {c}: {e}")))?;
            compressed.push(clip);
            stats.push(s);
        }
        self.compressed_clips = compressed;
        Ok(stats)
    }

    /// The error each morph weight may have so that no vertex moves further
    /// than `settings.error_bound`, per slot of `rest_morph_weights`. A
    /// vertex moves by the sum over the mesh's targets of each weight's
    /// error times that target's delta there; each weight gets the bound
    /// over its target's longest position delta `L`, divided by the most
    /// any vertex sums of `|delta| / L` over the targets (1 where targets
    /// move separate vertices, at most the target count), so that sum
    /// stays within the bound (mesh units, taken as object units). Weights
    /// of targets that move no position (normals or tangents only) and
    /// slots no mesh uses get [`MAX_WEIGHT_ERROR`] at most.
    pub fn morph_weight_tolerances(&self, settings: &CompressionSettings) -> Vec<f64> {
        let length = |d: [f32; 3]| d.iter().map(|c| f64::from(*c).powi(2)).sum::<f64>().sqrt();
        let mut tolerances = vec![MAX_WEIGHT_ERROR; self.rest_morph_weights.len()];
        for instance in &self.instances {
            let mesh = &self.meshes[instance.mesh];
            let n = instance.morph_count as usize;
            let positions = |target: usize| {
                mesh.primitives
                    .iter()
                    .map(move |p| p.morph_targets.get(target).and_then(|t| t.positions.as_ref()))
            };
            let longest: Vec<f64> = (0..n)
                .map(|target| {
                    let mut longest = 0.0f64;
                    for deltas in positions(target).flatten() {
                        deltas.for_each(|_, d| longest = longest.max(length(d)));
                    }
                    longest
                })
                .collect();
            // The most any vertex sums of |delta| / longest over the targets.
            let mut overlap = 0.0f64;
            for primitive in &mesh.primitives {
                let mut sums = vec![0.0f64; primitive.vertex_count()];
                for (target, &l) in longest.iter().enumerate().filter(|(_, l)| **l > 0.0) {
                    if let Some(deltas) =
                        primitive.morph_targets.get(target).and_then(|t| t.positions.as_ref())
                    {
                        deltas.for_each(|v, d| {
                            if let Some(sum) = sums.get_mut(v) {
                                *sum += length(d) / l;
                            }
                        });
                    }
                }
                overlap = sums.into_iter().fold(overlap, f64::max);
            }
            for (target, &l) in longest.iter().enumerate() {
                if let Some(t) = tolerances.get_mut(instance.morph_offset as usize + target)
                    && l > 0.0
                {
                    *t = t.min(settings.error_bound / (overlap.max(1.0) * l));
                }
            }
        }
        tolerances
    }

    /// How characters of this rig interpolate LINEAR rotation keys, from
    /// their creation on (each may change its own): slerp by default, as
    /// glTF specifies; nlerp for crowds, about a tenth faster per character
    /// update (the error against slerp is in [`RotationBlend::Nlerp`]'s
    /// documentation). Compressed clips always nlerp, corrected to follow
    /// slerp's path.
    pub fn rotation_blend(&self) -> RotationBlend {
        self.rotation_blend
    }

    /// Sets [`Rig::rotation_blend`].
    pub fn set_rotation_blend(&mut self, blend: RotationBlend) {
        self.rotation_blend = blend;
    }

    /// Whether characters sample compressed clips (see [`Rig::compress_clips`]).
    pub fn samples_compressed_clips(&self) -> bool {
        !self.compressed_clips.is_empty()
    }

    /// Clip `clip` compressed, when the rig samples compressed clips.
    pub fn compressed_clip(&self, clip: usize) -> Option<&CompressedClip> {
        self.compressed_clips.get(clip)
    }

    /// Display name of clip `clip`: its name, or `animation_N` (three.js's
    /// name for an unnamed clip); "" for an unknown clip.
    pub fn clip_name(&self, clip: usize) -> &str {
        self.clip_names.get(clip).map_or("", String::as_str)
    }

    /// Index of the clip with this name, or with this index when `key` is a
    /// number, or `animation_N` for an unnamed clip N (three.js's name for it).
    pub fn find_clip(&self, key: &str) -> Option<usize> {
        let unnamed = |i: &usize| self.clips.get(*i).is_some_and(|c| c.name.is_none());
        self.clips
            .iter()
            .position(|c| c.name.as_deref() == Some(key))
            .or_else(|| key.parse::<usize>().ok().filter(|&i| i < self.clips.len()))
            .or_else(|| key.strip_prefix("animation_")?.parse::<usize>().ok().filter(unnamed))
    }

    /// World matrices of the bind pose: each skin joint at
    /// `inverse(inverse_bind)`, every other node at its rest local transform
    /// under its parent (attachments under a joint follow it; nodes above
    /// the skeleton keep their rest world matrix). `out` is as long as the skeleton.
    pub fn bind_pose_world(&self, out: &mut [Matrix4<f32>]) {
        let parents = self.skeleton.parents();
        let rest = self.skeleton.rest();
        for j in 0..out.len().min(parents.len()) {
            out[j] = match self.bind_world[j] {
                Some(m) => m,
                None => {
                    let local = rest[j].to_matrix();
                    let parent = parents[j];
                    if parent == NO_PARENT { local } else { out[parent as usize] * local }
                }
            };
        }
    }
}

/// Whether two skins give the same palette: the same joints and the same
/// inverse binds bit for bit (so that sharing changes no result).
fn same_palette(a: &Skin, b: &Skin) -> bool {
    let bits = |m: &Matrix4<f32>| m.map(f32::to_bits);
    a.joints == b.joints
        && a.inverse_binds.len() == b.inverse_binds.len()
        && a.inverse_binds.iter().zip(&b.inverse_binds).all(|(x, y)| bits(x) == bits(y))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::MorphDeltas;
    use crate::test_model::test_model;

    /// The test rig with `skins` instead of its one skin.
    fn with_skins(skins: Vec<Skin>) -> Result<Rig, JobError> {
        let rig = &test_model().rig;
        let (meshes, instances, clips) = (rig.meshes.clone(), rig.instances.clone(), rig.clips.clone());
        Rig::new(rig.skeleton.clone(), skins, meshes, instances, clips, rig.rest_morph_weights.clone())
    }

    #[test]
    fn skins_with_the_same_joints_and_inverse_binds_share_one_palette_run() {
        let skin = test_model().rig.skins[0].clone();
        // One bit of one inverse bind apart: its own run.
        let mut nudged = skin.clone();
        nudged.inverse_binds[1][(1, 3)] = f32::from_bits(nudged.inverse_binds[1][(1, 3)].to_bits() + 1);
        // A signed zero is a different bit pattern, so its own run too.
        let mut signed_zero = skin.clone();
        signed_zero.inverse_binds[0][(0, 3)] = -0.0;
        let mut other_joints = skin.clone();
        other_joints.joints = vec![1, 3];
        let renamed = Skin { name: "the same matrices".into(), ..skin.clone() };
        let rig =
            with_skins(vec![skin.clone(), nudged.clone(), renamed, signed_zero, other_joints, nudged, skin])
                .unwrap();
        assert_eq!(rig.palette_ranges(), [[0, 2], [2, 4], [0, 2], [4, 6], [6, 8], [2, 4], [0, 2]]);
        assert_eq!(rig.palette_skins(), [0, 1, 3, 4]);
        assert_eq!(rig.palette_len(), 8);
        // No skins (and so no skinned instance): no palette.
        let model = test_model();
        let (skeleton, meshes, clips) = (model.skeleton.clone(), model.meshes.clone(), model.clips.clone());
        let none = Rig::new(skeleton, Vec::new(), meshes, Vec::new(), clips, vec![0.0; 2]).unwrap();
        assert_eq!((none.palette_ranges(), none.palette_skins(), none.palette_len()), (&[][..], &[][..], 0));
    }

    #[test]
    fn morph_weight_tolerances_share_the_bound_where_targets_overlap() {
        let settings = CompressionSettings::default();
        // Both targets move every vertex 0.1: a vertex sums both errors.
        let rig = (*test_model().rig).clone();
        let both = settings.error_bound / (2.0 * 0.1);
        for t in rig.morph_weight_tolerances(&settings) {
            assert!((t - both).abs() < 1e-6 * both, "{t}");
        }
        // Targets on separate vertices: each weight gets the whole bound,
        // over its own longest delta.
        let mut apart = rig.clone();
        let mut mesh = (*apart.meshes[0]).clone();
        let targets = &mut mesh.primitives[0].morph_targets;
        targets[0].positions = Some(MorphDeltas::Sparse { indices: vec![0], deltas: vec![[0.1, 0.0, 0.0]] });
        targets[1].positions = Some(MorphDeltas::Sparse { indices: vec![2], deltas: vec![[0.0, 0.4, 0.0]] });
        apart.meshes[0] = Arc::new(mesh);
        let t = apart.morph_weight_tolerances(&settings);
        assert!((t[0] - settings.error_bound / 0.1).abs() < 1e-6 * t[0], "{t:?}");
        assert!((t[1] - settings.error_bound / 0.4).abs() < 1e-6 * t[1], "{t:?}");
        // No position deltas: the normals-only cap.
        let mut flat = rig.clone();
        let mut mesh = (*flat.meshes[0]).clone();
        mesh.primitives[0].morph_targets.iter_mut().for_each(|t| t.positions = None);
        flat.meshes[0] = Arc::new(mesh);
        assert_eq!(flat.morph_weight_tolerances(&settings), vec![MAX_WEIGHT_ERROR; 2]);
    }
}
