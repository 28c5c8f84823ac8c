//! `vkskin dump`: joint world matrices and skinned vertex positions as JSON,
//! in the format of DESIGN.md (a contract: external checks parse it).

use super::args::Skinning;
use crate::asset::Model;
use crate::scene::Evaluator;
use serde::Serialize;

/// What to dump.
pub struct Request<'a> {
    /// Clip name or index; `None` dumps the rest pose.
    pub clip: Option<&'a str>,
    /// Seconds on the file's timeline.
    pub time: f32,
    /// Where vertices are skinned.
    pub skinning: Skinning,
}

/// The dump document.
#[derive(Debug, Serialize)]
pub struct Dump {
    /// Clip name (its index when unnamed); null for the rest pose.
    pub clip: serde_json::Value,
    /// The requested time.
    pub time: f32,
    /// Every node that is a joint of any skin, by node index.
    pub joints: Vec<JointDump>,
    /// Every mesh primitive instantiated by a node.
    pub primitives: Vec<PrimitiveDump>,
}

/// One joint's scene-space matrix.
#[derive(Debug, Serialize)]
pub struct JointDump {
    /// glTF node index.
    pub node: usize,
    /// Node name ("" when unnamed).
    pub name: String,
    /// Column-major column-vector matrix (glTF order).
    pub world: [f32; 16],
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

/// Evaluates `model` as `request` says.
pub fn evaluate(model: &Model, request: &Request) -> Result<Dump, String> {
    let mut evaluator = Evaluator::new(model);
    let clip = match request.clip {
        None => {
            evaluator.set_rest(model).map_err(|e| e.to_string())?;
            serde_json::Value::Null
        }
        Some(key) => {
            let index = model.find_clip(key).ok_or_else(|| unknown_clip(model, key))?;
            evaluator.set_clip_time(model, index, request.time).map_err(|e| e.to_string())?;
            match &model.clips[index].name {
                Some(name) => serde_json::Value::from(name.as_str()),
                None => serde_json::Value::from(index),
            }
        }
    };
    let joints = model
        .skin_joint_nodes()
        .into_iter()
        .map(|node| {
            let joint = model.joint_of_node[node] as usize;
            let mut world = [0.0; 16];
            world.copy_from_slice(evaluator.world()[joint].as_slice());
            JointDump { node, name: model.skeleton.names()[joint].clone(), world }
        })
        .collect();
    let mut primitives = Vec::new();
    for instance in &model.instances {
        let mesh = &model.meshes[instance.mesh];
        for (primitive, &index) in mesh.primitives.iter().zip(&mesh.primitive_indices) {
            let mut positions = vec![[0.0f32; 3]; primitive.vertex_count()];
            match request.skinning {
                Skinning::Cpu => evaluator
                    .skin_primitive(instance, primitive, &mut positions, None)
                    .map_err(|e| format!("mesh {} primitive {index}: {e}", instance.mesh))?,
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
    Ok(Dump { clip, time: request.time, joints, primitives })
}

/// Evaluates and serialises to JSON text.
pub fn dump(model: &Model, request: &Request) -> Result<String, String> {
    let document = evaluate(model, request)?;
    serde_json::to_string(&document).map_err(|e| e.to_string())
}

/// The error for a clip key that matches nothing, listing what exists.
fn unknown_clip(model: &Model, key: &str) -> String {
    let names: Vec<String> = model
        .clips
        .iter()
        .enumerate()
        .map(|(i, c)| match &c.name {
            Some(n) => format!("{i} \"{n}\""),
            None => i.to_string(),
        })
        .collect();
    if names.is_empty() {
        format!("no clip \"{key}\": the file has no animations")
    } else {
        format!("no clip \"{key}\"; clips are: {}", names.join(", "))
    }
}
