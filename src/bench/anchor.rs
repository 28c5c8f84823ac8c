//! The ozz-animation-rs anchor data (`../shared/anchors/ozz-animation-rs/
//! export`): the 67-joint pab skeleton and its walk, jog, run and crossarms
//! clips, every key as ozz decodes it, read from JSON into vkskin's types.
//! Included with `#[path]` by the harnesses that need it.

#![allow(dead_code)]

use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use vkskin::anim::{Clip, Interpolation, JointTracks, NO_PARENT, Skeleton, Track, Transform};

/// The clips in the export folder.
pub const CLIPS: [&str; 4] = ["walk", "jog", "run", "crossarms"];

/// The export folder, relative to the checkout.
pub fn folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/anchors/ozz-animation-rs/export")
}

#[derive(Deserialize)]
struct JsonTransform {
    t: [f32; 3],
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

fn read<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// A transform from ozz's (x, y, z, w) quaternion order.
fn transform(t: [f32; 3], r: [f32; 4], s: [f32; 3]) -> Transform {
    Transform {
        translation: Vector3::from(t),
        rotation: UnitQuaternion::new_unchecked(Quaternion::new(r[3], r[0], r[1], r[2])),
        scale: Vector3::from(s),
    }
}

/// The pab skeleton.
pub fn skeleton() -> Result<Skeleton, String> {
    let path = folder().join("skeleton.json");
    let s: JsonSkeleton = read(&path)?;
    let parents = s.parents.iter().map(|&p| if p < 0 { NO_PARENT } else { p as u32 }).collect();
    let rest = s.rest_pose.iter().map(|t| transform(t.t, t.r, t.s)).collect();
    Skeleton::new(s.names, parents, rest).map_err(|e| format!("{}: {e}", path.display()))
}

/// One clip (`CLIPS`): linear keys per track, as ozz samples them (lerp for
/// translations and scales, nlerp for rotations).
pub fn clip(name: &str) -> Result<Clip, String> {
    let path = folder().join(format!("{name}.json"));
    let c: JsonClip = read(&path)?;
    let track = |keys: &[(f32, [f32; 3])]| Track {
        times: keys.iter().map(|k| k.0).collect(),
        values: keys.iter().map(|k| Vector3::from(k.1)).collect(),
        interpolation: Interpolation::Linear,
    };
    let joint_tracks = c
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
    Ok(Clip { name: Some(c.name), duration: c.duration, joint_tracks, ..Clip::default() })
}

#[derive(Deserialize)]
struct JsonReference {
    cases: Vec<JsonCase>,
}

#[derive(Deserialize)]
struct JsonCase {
    case: String,
    local: Option<Vec<JsonTransform>>,
}

/// The sampled cases of `reference.json`: clip name, time and ozz's local pose.
pub fn sampled_cases() -> Result<Vec<(String, f64, Vec<Transform>)>, String> {
    let path = folder().join("reference.json");
    let r: JsonReference = read(&path)?;
    let mut out = Vec::new();
    for case in r.cases {
        // "sample walk ratio=0.25 time=0.33333334s"
        let mut words = case.case.split_whitespace();
        let (Some("sample"), Some(clip), Some(_), Some(time), Some(local)) =
            (words.next(), words.next(), words.next(), words.next(), case.local)
        else {
            continue;
        };
        let time = time
            .trim_start_matches("time=")
            .trim_end_matches('s')
            .parse::<f64>()
            .map_err(|e| format!("{}: case \"{}\": {e}", path.display(), case.case))?;
        out.push((clip.to_string(), time, local.iter().map(|t| transform(t.t, t.r, t.s)).collect()));
    }
    Ok(out)
}
