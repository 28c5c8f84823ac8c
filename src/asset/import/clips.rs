//! Clips: each animation's channels read into joint and morph-weight
//! tracks (target, sampler, key times and values, each checked), and its
//! events from `extras.vkskin_events`.
//!
//! It only reads and checks: it never resamples, reorders keys or samples a
//! clip.

use crate::anim::{Clip, ClipEvent, Interpolation, JointTracks, MeshInstance, MorphWeightTrack, Track};
use crate::asset::accessor::Reader;
use crate::asset::error::{AssetError, invalid};
use crate::asset::validate;
use crate::text::label;
use gltf::json::{
    self,
    animation::{Channel, Interpolation as JsonInterpolation, Property},
    validation::Checked,
};
use nalgebra::{Quaternion, Vector3};
use std::collections::{BTreeMap, HashMap};

/// Every animation of `root` as a clip, in file order. `channel_indices`
/// gives each channel's index in the file (gltf-json may have dropped some).
pub(super) fn build_clips(
    root: &json::Root,
    reader: Reader,
    channel_indices: &[Vec<usize>],
    joint_of_node: &[u32],
    instances: &[MeshInstance],
    warnings: &mut Vec<String>,
) -> Result<Vec<Clip>, AssetError> {
    let channels =
        Channels { reader, joint_of_node, instance_of_node: instances.iter().map(|i| (i.node, i)).collect() };
    let mut clips = Vec::with_capacity(root.animations.len());
    for (a, anim) in root.animations.iter().enumerate() {
        let indices = channel_indices.get(a).map_or(&[][..], Vec::as_slice);
        clips.push(channels.clip(a, anim, indices, warnings)?);
    }
    Ok(clips)
}

/// What reading any animation's channels needs: the accessors, the joint
/// of each node, and the mesh instance of each node that draws one.
struct Channels<'a> {
    reader: Reader<'a>,
    joint_of_node: &'a [u32],
    instance_of_node: HashMap<usize, &'a MeshInstance>,
}

/// A clip's tracks as its channels are read: per joint (in joint order),
/// and the morph-weight tracks (in channel order).
#[derive(Default)]
struct ClipTracks {
    joints: BTreeMap<u32, JointTracks>,
    morphs: Vec<MorphWeightTrack>,
}

impl ClipTracks {
    /// `joint`'s tracks, empty at first.
    fn joint(&mut self, joint: u32) -> &mut JointTracks {
        self.joints.entry(joint).or_insert_with(|| JointTracks { joint, ..Default::default() })
    }
}

/// A channel's sampler, read and checked: its index, interpolation, key
/// times and output accessor.
struct Sampler {
    index: usize,
    interpolation: Interpolation,
    times: Vec<f32>,
    output: usize,
}

impl Channels<'_> {
    /// Animation `a` as a clip; `indices` are its channels' indices in the file.
    fn clip(
        &self,
        a: usize,
        anim: &json::Animation,
        indices: &[usize],
        warnings: &mut Vec<String>,
    ) -> Result<Clip, AssetError> {
        let what = label("animation", a, anim.name.as_deref());
        let mut tracks = ClipTracks::default();
        let mut targeted: HashMap<(usize, &'static str), usize> = HashMap::new();
        for (ci, channel) in anim.channels.iter().enumerate() {
            let c = indices.get(ci).copied().unwrap_or(ci);
            let ctx = format!("{what} channel {c}");
            let Checked::Valid(property) = channel.target.path else {
                warnings.push(format!("{ctx}: unknown target path; ignored"));
                continue;
            };
            let node = channel.target.node.value();
            let joint = self.target(&ctx, c, node, property, &mut targeted)?;
            let sampler = sampler(&ctx, anim, channel, self.reader)?;
            self.add_track(&ctx, node, joint, property, sampler, &mut tracks)?;
        }
        let mut clip = Clip {
            name: anim.name.clone(),
            duration: 0.0,
            joint_tracks: tracks.joints.into_values().collect(),
            morph_tracks: tracks.morphs,
            events: Vec::new(),
        };
        clip.update_duration();
        clip.events = clip_events(anim.extras.as_deref(), clip.duration, &what, warnings);
        Ok(clip)
    }

    /// The joint of channel `c`'s target `node`, once checked that the node
    /// exists and that no earlier channel animates its `property`.
    fn target(
        &self,
        ctx: &str,
        c: usize,
        node: usize,
        property: Property,
        targeted: &mut HashMap<(usize, &'static str), usize>,
    ) -> Result<u32, AssetError> {
        let path = property_name(property);
        let Some(&joint) = self.joint_of_node.get(node) else {
            return Err(invalid!(
                "{ctx}: target node {node} does not exist ({} nodes)",
                self.joint_of_node.len()
            ));
        };
        if let Some(prev) = targeted.insert((node, path), c) {
            return Err(invalid!("{ctx}: node {node} {path} is already animated by channel {prev}"));
        }
        Ok(joint)
    }

    /// Values per key beyond the interpolation's (1 or 3): the morph target
    /// count for weights (of a node whose mesh has some).
    fn width(&self, ctx: &str, node: usize, property: Property) -> Result<usize, AssetError> {
        if property != Property::MorphTargetWeights {
            return Ok(1);
        }
        let inst = self.instance_of_node.get(&node).ok_or_else(|| {
            invalid!("{ctx}: node {node} has no mesh, so it has no morph weights to animate")
        })?;
        if inst.morph_count == 0 {
            return Err(invalid!("{ctx}: node {node}'s mesh {} has no morph targets", inst.mesh));
        }
        Ok(inst.morph_count as usize)
    }

    /// Reads the output of `sampler` as `property` values of `node`
    /// (`joint`), checks their count and values, and adds the track.
    fn add_track(
        &self,
        ctx: &str,
        node: usize,
        joint: u32,
        property: Property,
        sampler: Sampler,
        tracks: &mut ClipTracks,
    ) -> Result<(), AssetError> {
        let Sampler { index: s, interpolation: interp, times, output: out } = sampler;
        let per_key = if interp == Interpolation::CubicSpline { 3 } else { 1 };
        let width = self.width(ctx, node, property)?;
        let check_len = |len: usize| -> Result<(), AssetError> {
            let expected = times.len() * per_key * width;
            if len == expected {
                Ok(())
            } else {
                Err(invalid!(
                    "{ctx}: sampler {s} has {} key times but {len} output values (expected {expected})",
                    times.len()
                ))
            }
        };
        let output_err = |e: AssetError| e.context(format!("{ctx} output"));
        let reader = self.reader;
        match property {
            Property::Translation | Property::Scale => {
                let values = reader.read_vec3(out).map_err(output_err)?;
                check_len(values.len())?;
                validate::check_finite("output value", &values).map_err(|e| e.context(ctx))?;
                let track = Some(Track {
                    times,
                    values: values.into_iter().map(Vector3::from).collect(),
                    interpolation: interp,
                });
                let entry = tracks.joint(joint);
                if property == Property::Translation {
                    entry.translation = track;
                } else {
                    entry.scale = track;
                }
            }
            Property::Rotation => {
                let values = reader.read_vec4(out).map_err(output_err)?;
                check_len(values.len())?;
                validate::check_finite("output value", &values).map_err(|e| e.context(ctx))?;
                validate::check_rotations(&values, per_key).map_err(|e| e.context(ctx))?;
                let values = values
                    .iter()
                    .map(|&q| super::without_noise(q))
                    .map(|[x, y, z, w]| Quaternion::new(w, x, y, z))
                    .collect();
                tracks.joint(joint).rotation = Some(Track { times, values, interpolation: interp });
            }
            Property::MorphTargetWeights => {
                let values = reader.read_scalar_f32(out).map_err(output_err)?;
                check_len(values.len())?;
                if let Some(i) = validate::first_non_finite(&values) {
                    return Err(invalid!("{ctx}: output value {i} is not finite"));
                }
                let inst = self.instance_of_node[&node];
                tracks.morphs.push(MorphWeightTrack {
                    offset: inst.morph_offset,
                    count: inst.morph_count,
                    times,
                    values,
                    interpolation: interp,
                });
            }
        }
        Ok(())
    }
}

/// The sampler of `channel`, with its key times read and checked.
fn sampler(
    ctx: &str,
    anim: &json::Animation,
    channel: &Channel,
    reader: Reader,
) -> Result<Sampler, AssetError> {
    let s = channel.sampler.value();
    let sampler = anim.samplers.get(s).ok_or_else(|| invalid!("{ctx}: sampler {s} does not exist"))?;
    let interpolation = interpolation(sampler.interpolation)
        .ok_or_else(|| invalid!("{ctx}: sampler {s}: unknown interpolation"))?;
    let times =
        reader.read_scalar_f32(sampler.input.value()).map_err(|e| e.context(format!("{ctx} input")))?;
    validate::check_key_times(&times).map_err(|e| e.context(ctx))?;
    Ok(Sampler { index: s, interpolation, times, output: sampler.output.value() })
}

fn interpolation(i: Checked<JsonInterpolation>) -> Option<Interpolation> {
    match i {
        Checked::Valid(JsonInterpolation::Linear) => Some(Interpolation::Linear),
        Checked::Valid(JsonInterpolation::Step) => Some(Interpolation::Step),
        Checked::Valid(JsonInterpolation::CubicSpline) => Some(Interpolation::CubicSpline),
        Checked::Invalid => None,
    }
}

fn property_name(p: Property) -> &'static str {
    match p {
        Property::Translation => "translation",
        Property::Rotation => "rotation",
        Property::Scale => "scale",
        Property::MorphTargetWeights => "weights",
    }
}

/// Events from an animation's `extras.vkskin_events` (`[{"time": seconds,
/// "name": text}, ...]`), sorted by time. Anything malformed is skipped with
/// a warning: events are annotations, never a reason to reject a file.
fn clip_events(
    extras: Option<&json::extras::RawValue>,
    duration: f32,
    what: &str,
    warnings: &mut Vec<String>,
) -> Vec<ClipEvent> {
    let Some(raw) = extras else { return Vec::new() };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(raw.get()) else { return Vec::new() };
    let Some(list) = value.get("vkskin_events") else { return Vec::new() };
    let Some(list) = list.as_array() else {
        warnings.push(format!("{what}: extras.vkskin_events is not an array; ignored"));
        return Vec::new();
    };
    let mut events = Vec::with_capacity(list.len());
    for (i, e) in list.iter().enumerate() {
        let time = e.get("time").and_then(serde_json::Value::as_f64).map(|t| t as f32);
        let name = e.get("name").and_then(serde_json::Value::as_str);
        match (time, name) {
            (Some(time), Some(name)) if time.is_finite() && (0.0..=duration).contains(&time) => {
                events.push(ClipEvent { time, name: name.to_string() });
            }
            (Some(time), Some(_)) => warnings.push(format!(
                "{what}: extras.vkskin_events[{i}]: time {time} is outside the clip (0..{duration} s); ignored"
            )),
            _ => warnings.push(format!(
                "{what}: extras.vkskin_events[{i}]: expected {{\"time\": number, \"name\": string}}; ignored"
            )),
        }
    }
    // Stable: events at the same time keep the file's order.
    events.sort_by(|a, b| a.time.total_cmp(&b.time));
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_events_are_sorted_and_malformed_ones_skipped() {
        let raw = |s: &str| json::extras::RawValue::from_string(s.to_string()).unwrap();
        let mut w = Vec::new();
        let extras = raw(r#"{"vkskin_events": [{"time": 0.5, "name": "b"}, {"time": 0.1, "name": "a"},
                {"time": "x", "name": "c"}, {"name": "d"}, 7, {"time": 9.0, "name": "late"},
                {"time": 0.5, "name": "b2"}]}"#);
        let events = clip_events(Some(&extras), 1.0, "animation 0", &mut w);
        let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "b2"]);
        assert_eq!(events[0].time, 0.1);
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(w[0].contains("vkskin_events[2]"), "{w:?}");

        let mut w = Vec::new();
        assert!(clip_events(Some(&raw(r#"{"vkskin_events": {"time": 1}}"#)), 1.0, "a", &mut w).is_empty());
        assert_eq!(w.len(), 1);
        let mut w = Vec::new();
        assert!(clip_events(Some(&raw(r#"{"other": 1}"#)), 1.0, "a", &mut w).is_empty());
        assert!(clip_events(Some(&raw("[1, 2]")), 1.0, "a", &mut w).is_empty());
        assert!(clip_events(None, 1.0, "a", &mut w).is_empty());
        assert!(w.is_empty());
    }
}
