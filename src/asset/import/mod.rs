//! glTF file -> `Model`: skeleton of every node, skins, meshes, instances,
//! materials and clips, with every value checked.
//!
//! `source` reads and validates the JSON and buffers, `accessor` reads data
//! with bounds checks, `validate` holds the value and graph checks; this module
//! walks the document in order and names the element in each message:
//! `nodes` (the skeleton and the nodes that draw meshes), `skins`,
//! `meshes` (with their materials) and `clips`; `rotation_noise` reads
//! exporters' noise in rotations (keys and node rotations) as zero.
//!
//! It never animates, draws or decides how a model is played: it builds the
//! `anim` data (the `Rig`) and the glTF bookkeeping a command needs, nothing
//! more.

mod clips;
mod meshes;
mod nodes;
mod rotation_noise;
mod skins;

use rotation_noise::without_noise;

use super::accessor::Reader;
use super::error::{AssetError, ImportError};
use super::files;
use super::limits::{Budget, LoadOptions};
use super::model::Model;
use super::source::{self, Source};
use crate::anim::Rig;
use crate::anim::compression::CompressionSettings;
use std::path::Path;
use std::sync::Arc;

/// Bytes charged per node: a joint, its rest and pose transforms and
/// matrices, in the skeleton and in each pose evaluated from it.
const BYTES_PER_NODE: u64 = 512;

/// Imports a glTF 2.0 file (`.gltf` with external or embedded buffers, or
/// `.glb`) with the default limits. Errors name `path` as given.
pub fn load(path: &Path) -> Result<Model, ImportError> {
    load_with(path, &LoadOptions::default())
}

/// Imports a glTF 2.0 file within `options`' limits.
pub fn load_with(path: &Path, options: &LoadOptions) -> Result<Model, ImportError> {
    let file = path.display().to_string();
    let bytes = files::read_file("", path, |size| options.check_file_size(size))
        .map_err(|e| ImportError::new(&file, e))?;
    load_from_bytes_with(&file, &bytes, path.parent(), options)
}

/// Imports a glTF file held in memory with the default limits. `file_name`
/// is used in messages; external buffers are looked up in `base_dir` (an
/// error when `None`).
pub fn load_from_bytes(file_name: &str, bytes: &[u8], base_dir: Option<&Path>) -> Result<Model, ImportError> {
    load_from_bytes_with(file_name, bytes, base_dir, &LoadOptions::default())
}

/// Imports a glTF file held in memory within `options`' limits.
pub fn load_from_bytes_with(
    file_name: &str,
    bytes: &[u8],
    base_dir: Option<&Path>,
    options: &LoadOptions,
) -> Result<Model, ImportError> {
    let budget = Budget::new(options, bytes.len() as u64);
    let cx = source::Context { base_dir, options, budget: &budget };
    let imported = source::parse(bytes, cx).and_then(|source| build(file_name, source, options, &budget));
    imported.map_err(|e| ImportError::new(file_name, e))
}

fn build(file: &str, src: Source, options: &LoadOptions, budget: &Budget) -> Result<Model, AssetError> {
    let Source { root, buffers, channel_indices, mut warnings } = src;
    let reader = Reader::new(&root, &buffers, budget);
    // Every node becomes a joint with its pose buffers (and a line of `inspect`).
    let nodes = root.nodes.len() as u64;
    budget.charge(nodes.saturating_mul(BYTES_PER_NODE), || format!("{nodes} nodes"))?;
    let (skeleton, node_of_joint, joint_of_node) = nodes::build_skeleton(&root, &mut warnings)?;
    let skins = skins::build_skins(&root, reader, &joint_of_node, budget, &mut warnings)?;
    let materials = meshes::build_materials(&root);

    // The skins each mesh is drawn with bound its joint indices.
    let mut skins_of_mesh: Vec<Vec<usize>> = vec![Vec::new(); root.meshes.len()];
    for node in &root.nodes {
        if let (Some(m), Some(s)) = (node.mesh, node.skin)
            && m.value() < root.meshes.len()
            && s.value() < skins.len()
        {
            skins_of_mesh[m.value()].push(s.value());
        }
    }
    let mut meshes = Vec::with_capacity(root.meshes.len());
    for (m, mesh) in root.meshes.iter().enumerate() {
        // The smallest skin is the binding limit; name it in errors.
        let limit = skins_of_mesh[m].iter().map(|&s| (s, skins[s].joints.len())).min_by_key(|&(_, n)| n);
        meshes.push(meshes::build_mesh(m, mesh, reader, limit, &skins, materials.len(), &mut warnings)?);
    }
    let (instances, rest_morph_weights) =
        nodes::build_instances(&root, &meshes, &joint_of_node, budget, &mut warnings)?;
    skins::check_inverse_binds(&root, &skins, &meshes, &instances, &node_of_joint, &mut warnings)?;
    let clips =
        clips::build_clips(&root, reader, &channel_indices, &joint_of_node, &instances, &mut warnings)?;

    let mut rig = Rig::new(
        Arc::new(skeleton),
        skins,
        meshes.into_iter().map(Arc::new).collect(),
        instances,
        clips.into_iter().map(Arc::new).collect(),
        rest_morph_weights,
    )?;
    rig.set_rotation_blend(options.rotation_blend);
    if options.compressed_clips {
        rig.compress_clips(&CompressionSettings::for_skeleton(&rig.skeleton))?;
    }
    Ok(Model {
        file: file.to_string(),
        rig: Arc::new(rig),
        node_of_joint,
        joint_of_node,
        materials,
        warnings,
        load_options: options.clone(),
        memory_used: budget.used(),
    })
}
