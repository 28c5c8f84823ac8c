//! The ozz-animation-rs anchor data (`../shared/anchors/ozz-animation-rs/export`):
//! the 67-joint pab skeleton, its clips with every key decoded to JSON, and
//! ozz-animation-rs's sampled outputs (`reference.json`), read into vkskin's
//! types, plus the check of vkskin's jobs against that reference.
//!
//! Shared by `cargo bench --bench anchor`, `cargo bench --bench compression`
//! and the anchor and compression tests.

use crate::anim::{
    BlendJob, BlendLayer, Clip, ClipCursor, Interpolation, JobError, JointTracks, LocalToModelJob, NO_PARENT,
    RotationBlend, RuntimeClip, SampleClipJob, Skeleton, Track, Transform,
};
use anyhow::{Context, anyhow};
use nalgebra::{Matrix4, Quaternion, UnitQuaternion, Vector3};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `../shared/anchors/ozz-animation-rs/export` next to this project.
pub fn export_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/anchors/ozz-animation-rs/export")
}

#[derive(Deserialize)]
struct JsonTransform {
    t: [f32; 3],
    /// x, y, z, w.
    r: [f32; 4],
    s: [f32; 3],
}

#[derive(Deserialize)]
struct JsonSkeleton {
    parents: Vec<i32>,
    names: Vec<String>,
    rest_pose: Vec<JsonTransform>,
}

#[derive(Deserialize)]
struct JsonTrack {
    t: Vec<(f32, [f32; 3])>,
    r: Vec<(f32, [f32; 4])>,
    s: Vec<(f32, [f32; 3])>,
}

#[derive(Deserialize)]
struct JsonClip {
    name: String,
    duration: f32,
    tracks: Vec<JsonTrack>,
}

#[derive(Deserialize)]
struct JsonCase {
    case: String,
    local: Vec<JsonTransform>,
    model: Vec<[f32; 16]>,
}

#[derive(Deserialize)]
struct JsonReference {
    cases: Vec<JsonCase>,
}

fn transform(j: &JsonTransform) -> Transform {
    Transform {
        translation: Vector3::from(j.t),
        rotation: UnitQuaternion::new_unchecked(Quaternion::new(j.r[3], j.r[0], j.r[1], j.r[2])),
        scale: Vector3::from(j.s),
    }
}

fn read<T: for<'de> Deserialize<'de>>(path: &Path) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    serde_json::from_str(&text).with_context(|| path.display().to_string())
}

/// One case of `reference.json`: a clip (or a blend of two) at a time, and
/// ozz-animation-rs's local transforms and model matrices.
pub struct Case {
    /// The case's description, as in the file.
    pub name: String,
    /// (clip name, seconds, weight) of each sampled clip.
    pub inputs: Vec<(String, f32, f32)>,
    /// ozz's local transforms.
    pub locals: Vec<Transform>,
    /// ozz's model matrices.
    pub models: Vec<Matrix4<f32>>,
}

/// Everything in the export folder.
pub struct Anchor {
    /// The pab skeleton.
    pub skeleton: Skeleton,
    /// crossarms, walk, jog, run (LINEAR tracks, every joint animated).
    pub clips: Vec<Arc<Clip>>,
    /// The reference cases.
    pub cases: Vec<Case>,
}

impl Anchor {
    /// Reads the folder `dir`.
    pub fn load(dir: &Path) -> anyhow::Result<Self> {
        let skeleton: JsonSkeleton = read(&dir.join("skeleton.json"))?;
        let parents = skeleton.parents.iter().map(|&p| if p < 0 { NO_PARENT } else { p as u32 }).collect();
        let rest = skeleton.rest_pose.iter().map(transform).collect();
        let skeleton = Skeleton::new(skeleton.names, parents, rest).context("skeleton.json")?;
        let mut clips = Vec::new();
        for name in ["crossarms", "walk", "jog", "run"] {
            let json: JsonClip = read(&dir.join(format!("{name}.json")))?;
            let track = |keys: &[(f32, [f32; 3])]| Track {
                times: keys.iter().map(|k| k.0).collect(),
                values: keys.iter().map(|k| Vector3::from(k.1)).collect(),
                interpolation: Interpolation::Linear,
            };
            let joint_tracks = json
                .tracks
                .iter()
                .enumerate()
                .map(|(j, t)| JointTracks {
                    joint: j as u32,
                    translation: Some(track(&t.t)),
                    rotation: Some(Track {
                        times: t.r.iter().map(|k| k.0).collect(),
                        values: t.r.iter().map(|k| Quaternion::new(k.1[3], k.1[0], k.1[1], k.1[2])).collect(),
                        interpolation: Interpolation::Linear,
                    }),
                    scale: Some(track(&t.s)),
                })
                .collect();
            clips.push(Arc::new(Clip {
                name: Some(json.name),
                duration: json.duration,
                joint_tracks,
                ..Default::default()
            }));
        }
        let reference: JsonReference = read(&dir.join("reference.json"))?;
        let duration =
            |name: &str| clips.iter().find(|c| c.name.as_deref() == Some(name)).map(|c| c.duration);
        let mut cases = Vec::new();
        for case in reference.cases {
            let inputs = parse_case(&case.case, &duration)
                .ok_or_else(|| anyhow!("reference.json: case \"{}\" not understood", case.case))?;
            cases.push(Case {
                name: case.case,
                inputs,
                locals: case.local.iter().map(transform).collect(),
                models: case.model.iter().map(|m| Matrix4::from_column_slice(m)).collect(),
            });
        }
        Ok(Anchor { skeleton, clips, cases })
    }

    /// The clip called `name`.
    pub fn clip(&self, name: &str) -> &Arc<Clip> {
        self.clips.iter().find(|c| c.name.as_deref() == Some(name)).expect("anchor clip")
    }
}

/// "sample walk ratio=0.25 time=0.33333334s" or "blend walk*0.4 + jog*0.6
/// at ratio=0.3 (threshold 0.1)" as (clip, time, weight) inputs; times are
/// `ratio * duration` in f32, as ozz computes them.
fn parse_case(case: &str, duration: &dyn Fn(&str) -> Option<f32>) -> Option<Vec<(String, f32, f32)>> {
    let words: Vec<&str> = case.split_whitespace().collect();
    let ratio = |w: &str| w.strip_prefix("ratio=")?.parse::<f32>().ok();
    match words.as_slice() {
        ["sample", clip, r, ..] => Some(vec![(clip.to_string(), ratio(r)? * duration(clip)?, 1.0)]),
        ["blend", a, "+", b, "at", r, ..] => {
            let r = ratio(r)?;
            let mut out = Vec::new();
            for input in [a, b] {
                let (clip, w) = input.split_once('*')?;
                out.push((clip.to_string(), r * duration(clip)?, w.parse().ok()?));
            }
            Some(out)
        }
        _ => None,
    }
}

/// Largest differences from one reference case: (local translation,
/// rotation, scale, model matrix element).
#[derive(Debug, Clone, Copy, Default)]
pub struct Errors {
    pub translation: f32,
    pub rotation: f32,
    pub scale: f32,
    pub model: f32,
}

impl Errors {
    /// The largest of the four.
    pub fn max(&self) -> f32 {
        self.translation.max(self.rotation).max(self.scale).max(self.model)
    }
}

/// Evaluates `case` with vkskin's runtime jobs (sampling with `mode`, the
/// N-pose blend, local to model) and measures the differences from ozz's
/// results. Rotations are compared up to sign (q and -q are one rotation).
pub fn check_case(anchor: &Anchor, case: &Case, mode: RotationBlend) -> Result<Errors, JobError> {
    let rest = anchor.skeleton.rest();
    let n = rest.len();
    let mut poses = Vec::new();
    for (clip, time, weight) in &case.inputs {
        let runtime = RuntimeClip::new(anchor.clip(clip).clone(), rest, &[])?;
        let mut pose = vec![Transform::IDENTITY; n];
        SampleClipJob {
            clip: &runtime,
            time: f64::from(*time),
            rotation_blend: mode,
            cursor: &mut ClipCursor::new(&runtime),
            output: &mut pose,
            morph_output: &mut [],
        }
        .run()?;
        poses.push((pose, *weight));
    }
    let locals = if poses.len() == 1 {
        poses.pop().unwrap().0
    } else {
        let layers: Vec<BlendLayer> =
            poses.iter().map(|(p, w)| BlendLayer { locals: p, morph_weights: &[], weight: *w }).collect();
        let mut out = vec![Transform::IDENTITY; n];
        BlendJob {
            layers: &layers,
            rest,
            rest_morph_weights: &[],
            rotation_blend: RotationBlend::Nlerp,
            output: &mut out,
            morph_output: &mut [],
        }
        .run()?;
        out
    };
    let mut models = vec![Matrix4::identity(); n];
    LocalToModelJob {
        parents: anchor.skeleton.parents(),
        locals: &locals,
        root: Matrix4::identity(),
        output: &mut models,
    }
    .run()?;
    let mut e = Errors::default();
    for (ours, theirs) in locals.iter().zip(&case.locals) {
        e.translation = e.translation.max((ours.translation - theirs.translation).amax());
        e.scale = e.scale.max((ours.scale - theirs.scale).amax());
        let (q, r) = (ours.rotation.coords, theirs.rotation.coords);
        e.rotation = e.rotation.max((q - r).amax().min((q + r).amax()));
    }
    for (ours, theirs) in models.iter().zip(&case.models) {
        e.model = e.model.max((ours - theirs).amax());
    }
    Ok(e)
}

/// The clips in the export folder, in the order the compression report lists them.
pub const CLIPS: [&str; 4] = ["walk", "jog", "run", "crossarms"];

/// The ozz runtime archive clip `name` (one of `CLIPS`) was exported from
/// (`../shared/anchors/ozz-animation-rs/SOURCES.md`), as ozz-animation's
/// offline optimiser wrote it.
pub fn ozz_file(name: &str) -> Option<PathBuf> {
    let file = match name {
        "walk" => "blend/animation1.ozz",
        "jog" => "blend/animation2.ozz",
        "run" => "blend/animation3.ozz",
        "crossarms" => "playback/animation.ozz",
        _ => return None,
    };
    Some(export_dir().join("..").join(file))
}

/// The export folder (`export_dir`).
pub fn folder() -> PathBuf {
    export_dir()
}

/// The pab skeleton alone.
pub fn skeleton() -> anyhow::Result<Skeleton> {
    Ok(Anchor::load(&export_dir())?.skeleton)
}

/// The clip called `name` (one of `CLIPS`).
pub fn clip(name: &str) -> anyhow::Result<Clip> {
    let anchor = Anchor::load(&export_dir())?;
    let found = anchor.clips.iter().find(|c| c.name.as_deref() == Some(name));
    found.map(|c| (**c).clone()).ok_or_else(|| anyhow!("no anchor clip \"{name}\""))
}

/// The cases of `reference.json` that sample one clip: (clip, seconds, ozz's local pose).
pub fn sampled_cases() -> anyhow::Result<Vec<(String, f64, Vec<Transform>)>> {
    let anchor = Anchor::load(&export_dir())?;
    Ok(anchor
        .cases
        .into_iter()
        .filter(|c| c.inputs.len() == 1)
        .map(|c| (c.inputs[0].0.clone(), f64::from(c.inputs[0].1), c.locals))
        .collect())
}
