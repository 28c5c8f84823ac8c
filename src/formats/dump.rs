//! The `vkskin dump` document: joint world matrices and skinned vertex
//! positions as JSON, in the format of DESIGN.md (a contract: external
//! checks parse it), evaluated through the character layer and skinned by
//! the CPU reference or by one frame of the renderer's compute pass.

use super::trace::TraceFrame;
use crate::anim::SkinInput;
use crate::anim::{SkinnedPose, hierarchy::local_to_model_f64};
use crate::asset::Model;
use crate::character::{Character, Controller};
use crate::render::GpuOptions;
use crate::render::frame_settings::Choice;
use crate::render::readback::skin_pose_on_gpu;
use crate::text::display_name;
use serde::Serialize;
use std::sync::Arc;

/// Where `dump` skins the vertices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Skinning {
    /// The CPU reference skinning.
    #[default]
    Cpu,
    /// The Vulkan compute skinning pass (read back from the GPU).
    Gpu,
}

impl Choice for Skinning {
    const ALL: &'static [Self] = &[Skinning::Cpu, Skinning::Gpu];
    fn name(self) -> &'static str {
        match self {
            Skinning::Cpu => "cpu",
            Skinning::Gpu => "gpu",
        }
    }
    fn help(self) -> &'static str {
        match self {
            Skinning::Cpu => "the CPU reference skinning",
            Skinning::Gpu => "the Vulkan compute skinning pass (read back from the GPU)",
        }
    }
}

/// What to dump.
pub struct Request<'a> {
    /// Clip name or index; `None` dumps the rest pose.
    pub clip: Option<&'a str>,
    /// Seconds on the file's timeline.
    pub time: f64,
    /// Where vertices are skinned.
    pub skinning: Skinning,
}

/// Which Vulkan device `Skinning::Gpu` uses, and whether it is validated.
#[derive(Debug, Clone, Copy, Default)]
pub struct GpuChoice<'a> {
    /// Device index or part of its name; `None` picks the best.
    pub device: Option<&'a str>,
    /// Khronos validation with synchronization validation; any message is an error.
    pub validation: bool,
}

/// The dump document.
#[derive(Debug, Serialize)]
pub struct Dump {
    /// Clip name (its index when unnamed); null for the rest pose and for
    /// a controller's frame (see `clips`).
    pub clip: serde_json::Value,
    /// The requested time.
    pub time: f64,
    /// Every node that is a joint of any skin, by node index.
    pub joints: Vec<JointDump>,
    /// Every mesh primitive instantiated by a node.
    pub primitives: Vec<PrimitiveDump>,
    /// A controller's frame (`dump --controller`): what produced it.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub controller: Option<ControllerFrame>,
}

/// What produced a controller's frame: the `simulate` trace's line for it
/// (state, weights, events, `clips`, `layers`, in a level the position
/// and feet), plus the joints inverse kinematics changed last.
#[derive(Debug, Serialize)]
pub struct ControllerFrame {
    /// The frame number reached (the one before `time` when it falls
    /// between frames, `time` then reached by one shorter update).
    pub frame: u32,
    /// The trace line's other fields for this frame (its `frame` is the
    /// one above; its `time`, the frame's, gives way to the dump's).
    #[serde(flatten)]
    pub trace: serde_json::Map<String, serde_json::Value>,
    /// Joints whose local transform inverse kinematics (foot placement in
    /// a level) replaced after the blend, with the transform the pose
    /// uses; empty without IK.
    pub ik: Vec<IkJoint>,
}

/// A joint's local transform as inverse kinematics left it.
#[derive(Debug, Serialize)]
pub struct IkJoint {
    /// glTF node index.
    pub node: usize,
    /// Node name.
    pub name: String,
    /// x, y, z.
    pub translation: [f32; 3],
    /// x, y, z, w (glTF order).
    pub rotation: [f32; 4],
    /// x, y, z.
    pub scale: [f32; 3],
}

/// One joint's scene-space matrix.
#[derive(Debug, Serialize)]
pub struct JointDump {
    /// glTF node index.
    pub node: usize,
    /// Node name ("" when unnamed).
    pub name: String,
    /// Column-major column-vector matrix (glTF order).
    pub world: [f64; 16],
}

/// One primitive's vertices after morphing and skinning, in scene space.
#[derive(Debug, Serialize)]
pub struct PrimitiveDump {
    /// glTF mesh index.
    pub mesh: usize,
    /// glTF primitive index within the mesh.
    pub primitive: usize,
    /// glTF node index of the instance.
    pub node: usize,
    /// Whether the instance is skinned.
    pub skinned: bool,
    /// x, y, z per vertex in accessor order.
    pub positions: Vec<f32>,
}

/// Evaluates `model` as `request` says (GPU skinning, if asked, on the
/// default device without validation).
pub fn evaluate(model: &Model, request: &Request) -> anyhow::Result<Dump> {
    evaluate_on(model, request, &GpuChoice::default())
}

/// Evaluates `model` as `request` says; `Skinning::Gpu` runs on `gpu`.
pub fn evaluate_on(model: &Model, request: &Request, gpu: &GpuChoice) -> anyhow::Result<Dump> {
    if !request.time.is_finite() {
        return Err(anyhow::anyhow!("--time {} is not a finite number of seconds", request.time));
    }
    // A file without animations has only its rest pose: dump that for any
    // --clip (as a player of that file would show), saying so on stderr.
    let clip_key = request.clip.filter(|key| {
        let animated = !model.clips.is_empty();
        if !animated {
            eprintln!("vkskin: {}: no animations, so --clip {key} dumps the rest pose", model.file);
        }
        animated
    });
    let index = match clip_key {
        None => None,
        Some(key) => Some(model.find_clip(key).ok_or_else(|| anyhow::anyhow!(unknown_clip(model, key)))?),
    };
    let clip = match index.map(|i| (i, &model.clips[i].name)) {
        None => serde_json::Value::Null,
        Some((_, Some(name))) => serde_json::Value::from(name.as_str()),
        Some((i, None)) => serde_json::Value::from(i),
    };
    // The clip sampled as a looping player would show it at that time
    // (no controller state: the rest pose), through the character layer.
    let controller = Controller::single_clip(model, index, true)?;
    let mut character = Character::new(model.rig.clone(), Arc::new(controller))?;
    character.seek(request.time);
    character.update(0.0)?;
    let (joints, primitives) = pose_dump(model, &character, request.skinning, gpu)?;
    Ok(Dump { clip, time: request.time, joints, primitives, controller: None })
}

/// Dumps `character` (posed by a controller run, `frame` of the trace,
/// whose line is `trace`) at `time` seconds into the run; `Skinning::Gpu`
/// runs on `gpu`.
pub fn controller_frame(
    model: &Model,
    character: &Character,
    frame: u32,
    time: f64,
    trace: TraceFrame,
    skinning: Skinning,
    gpu: &GpuChoice,
) -> anyhow::Result<Dump> {
    let (joints, primitives) = pose_dump(model, character, skinning, gpu)?;
    let (blended, shown) = (&character.local_pose().locals, &character.shown_pose().locals);
    let ik = blended
        .iter()
        .zip(shown)
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(j, (_, t))| IkJoint {
            node: model.node_of_joint[j],
            name: model.skeleton.names()[j].clone(),
            translation: t.translation.into(),
            rotation: t.rotation.coords.into(),
            scale: t.scale.into(),
        })
        .collect();
    let serde_json::Value::Object(mut trace) = serde_json::to_value(&trace)? else {
        anyhow::bail!("a trace frame is not a JSON object");
    };
    trace.remove("frame");
    trace.remove("time");
    let controller = Some(ControllerFrame { frame, trace, ik });
    Ok(Dump { clip: serde_json::Value::Null, time, joints, primitives, controller })
}

/// The joints and primitives of `character`'s shown pose.
fn pose_dump(
    model: &Model,
    character: &Character,
    skinning: Skinning,
    gpu: &GpuChoice,
) -> anyhow::Result<(Vec<JointDump>, Vec<PrimitiveDump>)> {
    let pose = character.pose();
    // Joint matrices in f64: scaled rigs (x100) drift by 1e-4 through f32 chains.
    let precise_world = local_to_model_f64(model.skeleton.parents(), &character.shown_pose().locals);
    let joints = model
        .skin_joint_nodes()
        .into_iter()
        .map(|node| {
            let joint = model.joint_of_node[node] as usize;
            let mut world = [0.0; 16];
            world.copy_from_slice(precise_world[joint].as_slice());
            JointDump { node, name: model.skeleton.names()[joint].clone(), world }
        })
        .collect();
    // The pose is evaluated on the CPU either way; only skinning differs.
    let mut gpu_positions = match skinning {
        Skinning::Cpu => None,
        Skinning::Gpu => Some(gpu_skin(model, pose, gpu)?.into_iter()),
    };
    let mut primitives = Vec::new();
    for instance in &model.instances {
        let mesh = &model.meshes[instance.mesh];
        for (primitive, &index) in mesh.primitives.iter().zip(&mesh.primitive_indices) {
            let mut positions = vec![[0.0f32; 3]; primitive.vertex_count()];
            match skinning {
                Skinning::Cpu => pose
                    .skin_primitive(instance, primitive, &mut positions, None)
                    .map_err(|e| anyhow::anyhow!("mesh {} primitive {index}: {e}", instance.mesh))?,
                Skinning::Gpu => {
                    let skinned = gpu_positions.as_mut().and_then(|g| g.next());
                    positions = skinned
                        .ok_or_else(|| anyhow::anyhow!("GPU output has fewer primitives than the model"))?;
                }
            }
            primitives.push(PrimitiveDump {
                mesh: instance.mesh,
                primitive: index,
                node: instance.node,
                skinned: instance.skin.is_some(),
                positions: positions.into_iter().flatten().collect(),
            });
        }
    }
    Ok((joints, primitives))
}

/// Evaluates and serialises to JSON text.
pub fn dump(model: &Model, request: &Request) -> anyhow::Result<String> {
    dump_on(model, request, &GpuChoice::default())
}

/// Evaluates (GPU skinning on `gpu`) and serialises to JSON text.
pub fn dump_on(model: &Model, request: &Request, gpu: &GpuChoice) -> anyhow::Result<String> {
    let document = evaluate_on(model, request, gpu)?;
    Ok(serde_json::to_string(&document)?)
}

/// Skins every instanced primitive of `model` at `pose` with the compute
/// pass (one frame of the renderer, read back) on the device `choice` names.
fn gpu_skin(model: &Model, pose: SkinnedPose, choice: &GpuChoice) -> anyhow::Result<Vec<Vec<[f32; 3]>>> {
    let options = GpuOptions {
        validation: choice.validation,
        device: choice.device.map(String::from),
        announce_device: true,
        ..Default::default()
    };
    let pose = SkinInput { pose, version: 0 };
    skin_pose_on_gpu(&options, Arc::new(model.clone()), pose).map_err(anyhow::Error::from)
}

/// The error for a clip key that matches nothing, listing what exists.
fn unknown_clip(model: &Model, key: &str) -> String {
    let names: Vec<String> = model
        .clips
        .iter()
        .enumerate()
        .map(|(i, c)| match &c.name {
            Some(n) => format!("{i} \"{}\"", display_name(n)),
            None => i.to_string(),
        })
        .collect();
    // Only reached for files with clips: without any, the rest pose is dumped.
    format!("no clip \"{}\"; clips are: {}", display_name(key), names.join(", "))
}
