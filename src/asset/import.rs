//! glTF file -> `Model`: skeleton of every node, skins, meshes, instances,
//! materials and clips, with every value checked.
//!
//! `source` reads and validates the JSON and buffers, `accessor` reads data
//! with bounds checks, `validate` holds the value and graph checks; this module
//! orchestrates and names the element in each message.

use super::accessor::Reader;
use super::error::{AssetError, ImportError, invalid};
use super::files;
use super::limits::{Budget, LoadOptions, MAX_SKIN_JOINTS};
use super::model::{Material, Mesh, MeshInstance, Model};
use super::source::{self, Source};
use super::validate;
use crate::anim::Rig;
use crate::anim::compression::CompressionSettings;
use crate::anim::{
    Clip, Influences, Interpolation, JointTracks, MeshPrimitive, MorphDeltas, MorphTarget, MorphWeightTrack,
    NO_PARENT, Skeleton, Skin, Track, Transform,
};
use crate::text::label;
use gltf::json::{
    self,
    animation::{Interpolation as JsonInterpolation, Property},
    mesh::{Mode, Semantic},
    validation::Checked,
};
use nalgebra::{Matrix3, Matrix4, Quaternion, Rotation3, UnitQuaternion, Vector3};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

/// Bytes charged per node: a joint, its rest and pose transforms and
/// matrices, in the skeleton and in each pose evaluated from it.
const BYTES_PER_NODE: u64 = 512;

/// Bytes charged per skin joint: its inverse bind matrix, index and palette
/// entry (CPU and GPU copies).
const BYTES_PER_SKIN_JOINT: u64 = 256;

/// Bytes charged per morph weight of an instance (rest weights and the
/// copies a pose and the skinning keep).
const BYTES_PER_MORPH_WEIGHT: u64 = 16;

/// Skin weight sums further than this from 1 earn a warning (all are renormalised).
const WEIGHT_SUM_TOLERANCE: f32 = 1e-3;

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
    let (skeleton, node_of_joint, joint_of_node) = build_skeleton(&root, &mut warnings)?;
    let skins = build_skins(&root, reader, &joint_of_node, budget, &mut warnings)?;
    let materials = build_materials(&root);

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
        meshes.push(build_mesh(m, mesh, reader, limit, &skins, materials.len(), &mut warnings)?);
    }
    let (instances, rest_morph_weights) =
        build_instances(&root, &meshes, &joint_of_node, budget, &mut warnings)?;
    check_inverse_binds(&root, &skins, &meshes, &instances, &node_of_joint, &mut warnings)?;
    let clips = build_clips(&root, reader, &channel_indices, &joint_of_node, &instances, &mut warnings)?;

    let mut rig = Rig::new(
        Arc::new(skeleton),
        skins,
        meshes.into_iter().map(Arc::new).collect(),
        instances,
        clips.into_iter().map(Arc::new).collect(),
        rest_morph_weights,
    )?;
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

// ---------------------------------------------------------------------------
// Skeleton

fn build_skeleton(
    root: &json::Root,
    warnings: &mut Vec<String>,
) -> Result<(Skeleton, Vec<usize>, Vec<u32>), AssetError> {
    let children: Vec<Vec<usize>> = root
        .nodes
        .iter()
        .map(|n| n.children.as_ref().map_or_else(Vec::new, |c| c.iter().map(|i| i.value()).collect()))
        .collect();
    let order = validate::node_order(&children)?;
    for (i, scene) in root.scenes.iter().enumerate() {
        let nodes: Vec<usize> = scene.nodes.iter().map(|n| n.value()).collect();
        validate::check_scene_roots(&nodes, &order.parent)
            .map_err(|e| e.context(label("scene", i, scene.name.as_deref())))?;
    }
    let mut joint_of_node = vec![NO_PARENT; root.nodes.len()];
    for (j, &n) in order.order.iter().enumerate() {
        joint_of_node[n] = j as u32;
    }
    let mut names = Vec::with_capacity(order.order.len());
    let mut parents = Vec::with_capacity(order.order.len());
    let mut rest = Vec::with_capacity(order.order.len());
    for &n in &order.order {
        let node = &root.nodes[n];
        let what = label("node", n, node.name.as_deref());
        names.push(node.name.clone().unwrap_or_default());
        parents.push(order.parent[n].map_or(NO_PARENT, |p| joint_of_node[p]));
        rest.push(rest_transform(node, &what, warnings)?);
    }
    let skeleton = Skeleton::new(names, parents, rest)?;
    Ok((skeleton, order.order, joint_of_node))
}

/// A node's local transform: its TRS, or its matrix split into TRS.
fn rest_transform(
    node: &json::Node,
    what: &str,
    warnings: &mut Vec<String>,
) -> Result<Transform, AssetError> {
    if let Some(m) = node.matrix {
        if m.iter().any(|v| !v.is_finite()) {
            return Err(invalid!("{what}: matrix is not finite"));
        }
        return Ok(decompose(&Matrix4::from_column_slice(&m), what, warnings));
    }
    let translation = node.translation.unwrap_or([0.0; 3]);
    let scale = node.scale.unwrap_or([1.0; 3]);
    let [x, y, z, w] = node.rotation.as_ref().map_or([0.0, 0.0, 0.0, 1.0], |r| r.0);
    if [translation, scale].iter().flatten().any(|v| !v.is_finite()) {
        return Err(invalid!("{what}: translation or scale is not finite"));
    }
    let q = Quaternion::new(w, x, y, z);
    if !q.coords.iter().all(|c| c.is_finite()) || q.norm_squared() <= f32::MIN_POSITIVE {
        return Err(invalid!("{what}: rotation {:?} is zero or not finite", [x, y, z, w]));
    }
    Ok(Transform {
        translation: Vector3::from(translation),
        // As stored when unit to the exporter's rounding (as viewers use
        // it; see anim::math::slerp), normalised when further off.
        rotation: if (q.norm_squared() - 1.0).abs() <= 2e-3 {
            UnitQuaternion::new_unchecked(q)
        } else {
            UnitQuaternion::from_quaternion(q)
        },
        scale: Vector3::from(scale),
    })
}

/// Splits a finite affine matrix into translation, rotation and scale (a
/// negative determinant becomes a negative z scale). A zero-scale axis leaves
/// no rotation to recover: the rotation is then taken as identity.
fn decompose(m: &Matrix4<f32>, what: &str, warnings: &mut Vec<String>) -> Transform {
    let translation = Vector3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)]);
    let mut basis: Matrix3<f32> = m.fixed_view::<3, 3>(0, 0).into_owned();
    let mut scale = Vector3::new(basis.column(0).norm(), basis.column(1).norm(), basis.column(2).norm());
    if basis.determinant() < 0.0 {
        scale.z = -scale.z;
    }
    let rotation = if scale.iter().all(|s| s.abs() > 1e-12) {
        for c in 0..3 {
            let s = scale[c];
            basis.column_mut(c).unscale_mut(s);
        }
        let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(basis));
        UnitQuaternion::from_quaternion(q.into_inner())
    } else {
        warnings.push(format!("{what}: matrix has a zero scale; its rotation is taken as identity"));
        UnitQuaternion::identity()
    };
    if m[(3, 0)] != 0.0 || m[(3, 1)] != 0.0 || m[(3, 2)] != 0.0 || m[(3, 3)] != 1.0 {
        warnings.push(format!("{what}: matrix is not affine; its last row is ignored"));
    }
    Transform { translation, rotation, scale }
}

// ---------------------------------------------------------------------------
// Skins and materials

fn build_skins(
    root: &json::Root,
    reader: Reader,
    joint_of_node: &[u32],
    budget: &Budget,
    warnings: &mut Vec<String>,
) -> Result<Vec<Skin>, AssetError> {
    let mut skins = Vec::with_capacity(root.skins.len());
    for (s, skin) in root.skins.iter().enumerate() {
        let what = label("skin", s, skin.name.as_deref());
        if skin.joints.is_empty() {
            return Err(invalid!("{what}: has no joints"));
        }
        if skin.joints.len() > MAX_SKIN_JOINTS {
            return Err(invalid!(
                "{what}: {} joints, more than a palette holds ({MAX_SKIN_JOINTS}: JOINTS_n name at most that many)",
                skin.joints.len()
            ));
        }
        // Many skins may list the same nodes: each has its own matrices and palette.
        let n = skin.joints.len() as u64;
        budget.charge(n * BYTES_PER_SKIN_JOINT, || format!("{what} ({n} joints)"))?;
        let mut joints = Vec::with_capacity(skin.joints.len());
        let mut first_use = std::collections::HashMap::with_capacity(skin.joints.len());
        for (i, node) in skin.joints.iter().enumerate() {
            let j = joint_of_node.get(node.value()).ok_or_else(|| {
                invalid!(
                    "{what}: joint {i} is node {}, which does not exist ({} nodes)",
                    node.value(),
                    joint_of_node.len()
                )
            })?;
            if let Some(first) = first_use.insert(*j, i) {
                return Err(invalid!("{what}: joint {i} is node {}, already joint {first}", node.value()));
            }
            joints.push(*j);
        }
        let inverse_binds = match skin.inverse_bind_matrices {
            None => vec![Matrix4::identity(); joints.len()],
            Some(a) => {
                let mats = reader
                    .read_mat4(a.value())
                    .map_err(|e| e.context(format!("{what} inverseBindMatrices")))?;
                if mats.len() < joints.len() {
                    return Err(invalid!(
                        "{what}: {} inverse bind matrices for {} joints",
                        mats.len(),
                        joints.len()
                    ));
                }
                if mats.len() > joints.len() {
                    warnings.push(format!(
                        "{what}: {} inverse bind matrices for {} joints; the extra ones are ignored",
                        mats.len(),
                        joints.len()
                    ));
                }
                validate::check_finite("inverse bind matrix", &mats).map_err(|e| e.context(what.clone()))?;
                mats.iter().take(joints.len()).map(|m| Matrix4::from_column_slice(m)).collect()
            }
        };
        skins.push(Skin { name: skin.name.clone().unwrap_or_default(), joints, inverse_binds });
    }
    Ok(skins)
}

/// A singular inverse bind matrix is an error for a joint that influences
/// vertices (they would collapse or explode) and a warning for any other.
fn check_inverse_binds(
    root: &json::Root,
    skins: &[Skin],
    meshes: &[Mesh],
    instances: &[MeshInstance],
    node_of_joint: &[usize],
    warnings: &mut Vec<String>,
) -> Result<(), AssetError> {
    for (s, skin) in skins.iter().enumerate() {
        let singular: Vec<usize> =
            (0..skin.joints.len()).filter(|&i| validate::is_singular(&skin.inverse_binds[i])).collect();
        if singular.is_empty() {
            continue;
        }
        // Skin joints that carry weight in a mesh drawn with this skin: (joint,
        // mesh). Each mesh once, however many nodes draw it.
        let drawn: std::collections::BTreeSet<usize> =
            instances.iter().filter(|i| i.skin == Some(s)).map(|i| i.mesh).collect();
        let mut influencing: HashMap<usize, usize> = HashMap::new();
        for mesh in drawn {
            for p in &meshes[mesh].primitives {
                let Some(inf) = &p.influences else { continue };
                for (&j, &w) in inf.joints.iter().zip(&inf.weights) {
                    if w > 0.0 {
                        influencing.entry(j as usize).or_insert(mesh);
                    }
                }
            }
        }
        let what = label("skin", s, root.skins[s].name.as_deref());
        for i in singular {
            let node = node_of_joint[skin.joints[i] as usize];
            match influencing.get(&i) {
                Some(&m) => {
                    return Err(invalid!(
                        "{what}: inverse bind matrix {i} (joint node {node}) is singular, and the joint influences vertices of mesh {m}"
                    ));
                }
                None => warnings.push(format!(
                    "{what}: inverse bind matrix {i} (joint node {node}) is singular; the joint influences no vertex"
                )),
            }
        }
    }
    Ok(())
}

fn build_materials(root: &json::Root) -> Vec<Material> {
    root.materials
        .iter()
        .map(|m| {
            let pbr = &m.pbr_metallic_roughness;
            let base_color_image = pbr
                .base_color_texture
                .as_ref()
                .and_then(|info| root.textures.get(info.index.value()))
                .map(|t| t.source.value())
                .filter(|&i| i < root.images.len());
            Material {
                name: m.name.clone().unwrap_or_default(),
                base_color: pbr.base_color_factor.0,
                base_color_image,
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Meshes

fn mode_name(mode: Checked<Mode>) -> &'static str {
    match mode {
        Checked::Valid(Mode::Points) => "POINTS",
        Checked::Valid(Mode::Lines) => "LINES",
        Checked::Valid(Mode::LineLoop) => "LINE_LOOP",
        Checked::Valid(Mode::LineStrip) => "LINE_STRIP",
        Checked::Valid(Mode::Triangles) => "TRIANGLES",
        Checked::Valid(Mode::TriangleStrip) => "TRIANGLE_STRIP",
        Checked::Valid(Mode::TriangleFan) => "TRIANGLE_FAN",
        Checked::Invalid => "unknown",
    }
}

fn build_mesh(
    m: usize,
    mesh: &json::Mesh,
    reader: Reader,
    joint_limit: Option<(usize, usize)>,
    skins: &[Skin],
    material_count: usize,
    warnings: &mut Vec<String>,
) -> Result<Mesh, AssetError> {
    let what = label("mesh", m, mesh.name.as_deref());
    let target_count = mesh.primitives.first().map_or(0, |p| p.targets.as_ref().map_or(0, Vec::len));
    for (p, prim) in mesh.primitives.iter().enumerate() {
        let n = prim.targets.as_ref().map_or(0, Vec::len);
        if n != target_count {
            return Err(invalid!(
                "{what} primitive {p}: {n} morph targets, but primitive 0 has {target_count} (all must match)"
            ));
        }
    }
    let mut primitives = Vec::new();
    let mut primitive_indices = Vec::new();
    for (p, prim) in mesh.primitives.iter().enumerate() {
        let ctx = format!("{what} primitive {p}");
        if !matches!(prim.mode, Checked::Valid(Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan)) {
            warnings.push(format!("{ctx}: mode {} draws no triangles; skipped", mode_name(prim.mode)));
            continue;
        }
        primitives.push(build_primitive(&ctx, prim, reader, joint_limit, skins, material_count, warnings)?);
        primitive_indices.push(p);
    }
    let target_names = target_names(mesh, target_count, &what, warnings);
    Ok(Mesh {
        name: mesh.name.clone().unwrap_or_default(),
        primitives,
        primitive_indices,
        target_names,
        target_count,
    })
}

/// A triangle strip as a triangle list (glTF: triangle i is i, i+1, i+2,
/// with the first two swapped for odd i to keep the winding).
fn strip_to_list(strip: &[u32]) -> Vec<u32> {
    strip
        .windows(3)
        .enumerate()
        .flat_map(|(i, w)| if i % 2 == 0 { [w[0], w[1], w[2]] } else { [w[1], w[0], w[2]] })
        .collect()
}

/// A triangle fan as a triangle list (triangle i is 0, i + 1, i + 2).
fn fan_to_list(fan: &[u32]) -> Vec<u32> {
    match fan.split_first() {
        Some((&hub, rest)) => rest.windows(2).flat_map(|w| [hub, w[0], w[1]]).collect(),
        None => Vec::new(),
    }
}

/// Morph target names from the de-facto standard `extras.targetNames`.
fn target_names(mesh: &json::Mesh, count: usize, what: &str, warnings: &mut Vec<String>) -> Vec<String> {
    let Some(raw) = &mesh.extras else { return Vec::new() };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(raw.get()) else { return Vec::new() };
    let Some(names) = value.get("targetNames").and_then(|v| v.as_array()) else { return Vec::new() };
    let names: Vec<String> = names.iter().map(|n| n.as_str().unwrap_or_default().to_string()).collect();
    if names.len() != count {
        warnings.push(format!(
            "{what}: extras.targetNames has {} names for {count} morph targets; ignored",
            names.len()
        ));
        return Vec::new();
    }
    names
}

fn check_count(ctx: &str, attribute: &str, len: usize, vertices: usize) -> Result<(), AssetError> {
    if len == vertices {
        Ok(())
    } else {
        Err(invalid!("{ctx} {attribute}: {len} elements, but POSITION has {vertices}"))
    }
}

fn build_primitive(
    ctx: &str,
    prim: &json::mesh::Primitive,
    reader: Reader,
    joint_limit: Option<(usize, usize)>,
    skins: &[Skin],
    material_count: usize,
    warnings: &mut Vec<String>,
) -> Result<MeshPrimitive, AssetError> {
    let attr = |s: Semantic| prim.attributes.get(&Checked::Valid(s)).map(|i| i.value());
    let Some(pos) = attr(Semantic::Positions) else {
        return Err(invalid!("{ctx}: no POSITION attribute"));
    };
    let positions = reader.read_vec3(pos).map_err(|e| e.context(format!("{ctx} POSITION")))?;
    validate::check_finite("vertex", &positions).map_err(|e| e.context(format!("{ctx} POSITION")))?;
    let n = positions.len();

    let normals = match attr(Semantic::Normals) {
        Some(a) => {
            let v = reader.read_vec3(a).map_err(|e| e.context(format!("{ctx} NORMAL")))?;
            check_count(ctx, "NORMAL", v.len(), n)?;
            validate::check_finite("vertex", &v).map_err(|e| e.context(format!("{ctx} NORMAL")))?;
            Some(v)
        }
        None => None,
    };
    let tangents = match attr(Semantic::Tangents) {
        Some(a) => {
            let v = reader.read_vec4(a).map_err(|e| e.context(format!("{ctx} TANGENT")))?;
            check_count(ctx, "TANGENT", v.len(), n)?;
            validate::check_finite("vertex", &v).map_err(|e| e.context(format!("{ctx} TANGENT")))?;
            Some(v)
        }
        None => None,
    };
    let uvs = match attr(Semantic::TexCoords(0)) {
        Some(a) => {
            let v = reader.read_vec2(a).map_err(|e| e.context(format!("{ctx} TEXCOORD_0")))?;
            check_count(ctx, "TEXCOORD_0", v.len(), n)?;
            validate::check_finite("vertex", &v).map_err(|e| e.context(format!("{ctx} TEXCOORD_0")))?;
            Some(v)
        }
        None => None,
    };

    let indices = match prim.indices {
        Some(a) => {
            let idx = reader.read_indices(a.value()).map_err(|e| e.context(format!("{ctx} indices")))?;
            if let Some(k) = idx.iter().position(|&i| i as usize >= n) {
                return Err(invalid!("{ctx} indices: index {k} is {}, but there are {n} vertices", idx[k]));
            }
            idx
        }
        None => (0..n as u32).collect(),
    };
    let indices = match prim.mode {
        Checked::Valid(Mode::TriangleStrip) => strip_to_list(&indices),
        Checked::Valid(Mode::TriangleFan) => fan_to_list(&indices),
        _ if !indices.len().is_multiple_of(3) => {
            return Err(invalid!("{ctx}: {} indices is not a whole number of triangles", indices.len()));
        }
        _ => indices,
    };

    let influences = build_influences(ctx, &attr, reader, n, joint_limit, skins, warnings)?;

    let mut morph_targets = Vec::new();
    for (t, target) in prim.targets.iter().flatten().enumerate() {
        let delta =
            |a: Option<json::Index<json::Accessor>>, name: &str| -> Result<Option<MorphDeltas>, AssetError> {
                let Some(a) = a else { return Ok(None) };
                let what = format!("{ctx} target {t} {name}");
                let v = reader.read_vec3(a.value()).map_err(|e| e.context(what.clone()))?;
                check_count(&format!("{ctx} target {t}"), name, v.len(), n)?;
                validate::check_finite("vertex", &v).map_err(|e| e.context(what.clone()))?;
                Ok(Some(MorphDeltas::compact(v)))
            };
        morph_targets.push(MorphTarget {
            positions: delta(target.positions, "POSITION")?,
            normals: delta(target.normals, "NORMAL")?,
            tangents: delta(target.tangents, "TANGENT")?,
        });
    }

    let material = prim.material.map(|m| m.value()).filter(|&m| m < material_count);
    Ok(MeshPrimitive { positions, normals, tangents, uvs, influences, morph_targets, indices, material })
}

/// Reads JOINTS_0/WEIGHTS_0 (and set 1 for eight influences), checks the
/// weights, clamps junk joint indices that carry no weight, and renormalises.
fn build_influences(
    ctx: &str,
    attr: &dyn Fn(Semantic) -> Option<usize>,
    reader: Reader,
    n: usize,
    joint_limit: Option<(usize, usize)>,
    skins: &[Skin],
    warnings: &mut Vec<String>,
) -> Result<Option<Influences>, AssetError> {
    let mut sets = Vec::new();
    for set in 0..2u32 {
        match (attr(Semantic::Joints(set)), attr(Semantic::Weights(set))) {
            (None, None) => break,
            (Some(j), Some(w)) => {
                let joints = reader.read_joints(j).map_err(|e| e.context(format!("{ctx} JOINTS_{set}")))?;
                check_count(ctx, &format!("JOINTS_{set}"), joints.len(), n)?;
                let weights = reader.read_vec4(w).map_err(|e| e.context(format!("{ctx} WEIGHTS_{set}")))?;
                check_count(ctx, &format!("WEIGHTS_{set}"), weights.len(), n)?;
                sets.push((joints, weights));
            }
            (Some(_), None) => return Err(invalid!("{ctx}: JOINTS_{set} without WEIGHTS_{set}")),
            (None, Some(_)) => return Err(invalid!("{ctx}: WEIGHTS_{set} without JOINTS_{set}")),
        }
    }
    if sets.is_empty() {
        if attr(Semantic::Joints(1)).is_some() {
            warnings.push(format!("{ctx}: JOINTS_1 without JOINTS_0; influences ignored"));
        }
        return Ok(None);
    }
    if sets.len() == 2 && attr(Semantic::Joints(2)).is_some() {
        warnings.push(format!("{ctx}: more than 8 influences per vertex; JOINTS_2 and above ignored"));
    }
    let per_vertex = 4 * sets.len();
    let mut joints = vec![0u16; n * per_vertex];
    let mut weights = vec![0f32; n * per_vertex];
    for v in 0..n {
        for (s, (js, ws)) in sets.iter().enumerate() {
            let at = v * per_vertex + s * 4;
            joints[at..at + 4].copy_from_slice(&js[v]);
            weights[at..at + 4].copy_from_slice(&ws[v]);
        }
    }

    let (mut clamped, mut renormalised, mut all_zero) = (0usize, 0usize, 0usize);
    for v in 0..n {
        let range = v * per_vertex..(v + 1) * per_vertex;
        for i in range.clone() {
            let w = weights[i];
            if !w.is_finite() || w < 0.0 {
                return Err(invalid!(
                    "{ctx}: vertex {v} has skin weight {w} (influence {}); weights must be finite and non-negative",
                    i - range.start
                ));
            }
            if let Some((s, count)) = joint_limit
                && joints[i] as usize >= count
            {
                if w > 0.0 {
                    return Err(invalid!(
                        "{ctx}: vertex {v} uses joint {} (weight {w}), but {} has {count} joints",
                        joints[i],
                        label("skin", s, Some(&skins[s].name).filter(|n| !n.is_empty()).map(|n| n.as_str())),
                    ));
                }
                // Exporters write junk joint indices next to zero weights.
                joints[i] = 0;
                clamped += 1;
            }
        }
        let sum: f32 = weights[range.clone()].iter().sum();
        if sum == 0.0 {
            // What three.js does: the vertex follows its first listed joint.
            weights[range.start] = 1.0;
            all_zero += 1;
        } else if sum != 1.0 {
            if (sum - 1.0).abs() > WEIGHT_SUM_TOLERANCE {
                renormalised += 1;
            }
            weights[range].iter_mut().for_each(|w| *w /= sum);
        }
    }
    if renormalised > 0 {
        warnings
            .push(format!("{ctx}: {renormalised} vertices had skin weights not summing to 1; renormalised"));
    }
    if all_zero > 0 {
        warnings.push(format!(
            "{ctx}: {all_zero} vertices had all skin weights zero; bound to their first joint with weight 1"
        ));
    }
    if clamped > 0 {
        warnings.push(format!("{ctx}: {clamped} out-of-range joint indices with zero weight set to joint 0"));
    }
    Ok(Some(Influences { per_vertex, joints, weights }))
}

// ---------------------------------------------------------------------------
// Instances

fn build_instances(
    root: &json::Root,
    meshes: &[Mesh],
    joint_of_node: &[u32],
    budget: &Budget,
    warnings: &mut Vec<String>,
) -> Result<(Vec<MeshInstance>, Vec<f32>), AssetError> {
    let mut instances = Vec::new();
    let mut rest = Vec::new();
    for (n, node) in root.nodes.iter().enumerate() {
        let Some(m) = node.mesh.map(|m| m.value()) else { continue };
        let what = label("node", n, node.name.as_deref());
        let mesh = meshes
            .get(m)
            .ok_or_else(|| invalid!("{what}: mesh {m} does not exist ({} meshes)", meshes.len()))?;
        let json_mesh = &root.meshes[m];
        let mesh_what = label("mesh", m, json_mesh.name.as_deref());
        let has_joints = mesh.primitives.iter().any(|p| p.influences.is_some());
        let skin = match node.skin.map(|s| s.value()) {
            Some(s) if s >= root.skins.len() => return Err(invalid!("{what}: skin {s} does not exist")),
            Some(_) if !has_joints => {
                warnings.push(format!(
                    "{what}: has a skin but {mesh_what} has no JOINTS_0/WEIGHTS_0; drawn unskinned"
                ));
                None
            }
            None if has_joints => {
                warnings.push(format!(
                    "{what}: {mesh_what} has skin weights but the node has no skin; drawn unskinned"
                ));
                None
            }
            s => s,
        };
        let count = mesh.target_count;
        // Each instance has its own morph weights (here and in every pose):
        // a mesh of many targets drawn by many nodes must not exhaust memory.
        budget.charge((count as u64).saturating_mul(BYTES_PER_MORPH_WEIGHT), || {
            format!("{what}: {count} morph weights of {mesh_what}")
        })?;
        let weights = match (&node.weights, &json_mesh.weights) {
            (Some(w), _) => Some((w, "node weights")),
            (None, Some(w)) => Some((w, "mesh weights")),
            (None, None) => None,
        };
        match weights {
            Some((w, source)) => {
                if w.len() != count {
                    return Err(invalid!(
                        "{what}: {} {source} for {count} morph targets of {mesh_what}",
                        w.len()
                    ));
                }
                if let Some(i) = validate::first_non_finite(w) {
                    return Err(invalid!("{what}: {source} {i} is not finite"));
                }
                rest.extend_from_slice(w);
            }
            None => rest.extend(std::iter::repeat_n(0.0, count)),
        }
        let offset = u32::try_from(rest.len() - count).map_err(|_| invalid!("too many morph weights"))?;
        instances.push(MeshInstance {
            node: n,
            joint: joint_of_node[n],
            mesh: m,
            skin,
            morph_offset: offset,
            morph_count: count as u32,
        });
    }
    Ok((instances, rest))
}

// ---------------------------------------------------------------------------
// Clips

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

fn build_clips(
    root: &json::Root,
    reader: Reader,
    channel_indices: &[Vec<usize>],
    joint_of_node: &[u32],
    instances: &[MeshInstance],
    warnings: &mut Vec<String>,
) -> Result<Vec<Clip>, AssetError> {
    let instance_of_node: HashMap<usize, &MeshInstance> = instances.iter().map(|i| (i.node, i)).collect();
    let mut clips = Vec::with_capacity(root.animations.len());
    for (a, anim) in root.animations.iter().enumerate() {
        let what = label("animation", a, anim.name.as_deref());
        let mut joint_tracks: BTreeMap<u32, JointTracks> = BTreeMap::new();
        let mut morph_tracks = Vec::new();
        let mut targeted: HashMap<(usize, &'static str), usize> = HashMap::new();
        for (ci, channel) in anim.channels.iter().enumerate() {
            let c = channel_indices.get(a).and_then(|k| k.get(ci)).copied().unwrap_or(ci);
            let ctx = format!("{what} channel {c}");
            let Checked::Valid(property) = channel.target.path else {
                warnings.push(format!("{ctx}: unknown target path; ignored"));
                continue;
            };
            let path = property_name(property);
            let node = channel.target.node.value();
            let Some(&joint) = joint_of_node.get(node) else {
                return Err(invalid!(
                    "{ctx}: target node {node} does not exist ({} nodes)",
                    joint_of_node.len()
                ));
            };
            if let Some(prev) = targeted.insert((node, path), c) {
                return Err(invalid!("{ctx}: node {node} {path} is already animated by channel {prev}"));
            }
            let s = channel.sampler.value();
            let sampler =
                anim.samplers.get(s).ok_or_else(|| invalid!("{ctx}: sampler {s} does not exist"))?;
            let interp = interpolation(sampler.interpolation)
                .ok_or_else(|| invalid!("{ctx}: sampler {s}: unknown interpolation"))?;
            let times = reader
                .read_scalar_f32(sampler.input.value())
                .map_err(|e| e.context(format!("{ctx} input")))?;
            validate::check_key_times(&times).map_err(|e| e.context(ctx.as_str()))?;
            let per_key = if interp == Interpolation::CubicSpline { 3 } else { 1 };
            let out = sampler.output.value();
            // Values per key beyond the interpolation's (1 or 3): the morph target count for weights.
            let width = match property {
                Property::MorphTargetWeights => {
                    let inst = instance_of_node.get(&node).ok_or_else(|| {
                        invalid!("{ctx}: node {node} has no mesh, so it has no morph weights to animate")
                    })?;
                    if inst.morph_count == 0 {
                        return Err(invalid!("{ctx}: node {node}'s mesh {} has no morph targets", inst.mesh));
                    }
                    inst.morph_count as usize
                }
                _ => 1,
            };
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
            match property {
                Property::Translation | Property::Scale => {
                    let values = reader.read_vec3(out).map_err(output_err)?;
                    check_len(values.len())?;
                    validate::check_finite("output value", &values).map_err(|e| e.context(ctx.as_str()))?;
                    let track = Some(Track {
                        times,
                        values: values.into_iter().map(Vector3::from).collect(),
                        interpolation: interp,
                    });
                    let entry = joint_tracks
                        .entry(joint)
                        .or_insert_with(|| JointTracks { joint, ..Default::default() });
                    if property == Property::Translation {
                        entry.translation = track;
                    } else {
                        entry.scale = track;
                    }
                }
                Property::Rotation => {
                    let values = reader.read_vec4(out).map_err(output_err)?;
                    check_len(values.len())?;
                    validate::check_finite("output value", &values).map_err(|e| e.context(ctx.as_str()))?;
                    validate::check_rotations(&values, per_key).map_err(|e| e.context(ctx.as_str()))?;
                    let values = values.iter().map(|&[x, y, z, w]| Quaternion::new(w, x, y, z)).collect();
                    let entry = joint_tracks
                        .entry(joint)
                        .or_insert_with(|| JointTracks { joint, ..Default::default() });
                    entry.rotation = Some(Track { times, values, interpolation: interp });
                }
                Property::MorphTargetWeights => {
                    let values = reader.read_scalar_f32(out).map_err(output_err)?;
                    check_len(values.len())?;
                    if let Some(i) = validate::first_non_finite(&values) {
                        return Err(invalid!("{ctx}: output value {i} is not finite"));
                    }
                    let inst = instance_of_node[&node];
                    morph_tracks.push(MorphWeightTrack {
                        offset: inst.morph_offset,
                        count: inst.morph_count,
                        times,
                        values,
                        interpolation: interp,
                    });
                }
            }
        }
        let mut clip = Clip {
            name: anim.name.clone(),
            duration: 0.0,
            joint_tracks: joint_tracks.into_values().collect(),
            morph_tracks,
            events: Vec::new(),
        };
        clip.update_duration();
        clip.events = clip_events(anim.extras.as_deref(), clip.duration, &what, warnings);
        clips.push(clip);
    }
    Ok(clips)
}

/// Events from an animation's `extras.vkskin_events` (`[{"time": seconds,
/// "name": text}, ...]`), sorted by time. Anything malformed is skipped with
/// a warning: events are annotations, never a reason to reject a file.
fn clip_events(
    extras: Option<&json::extras::RawValue>,
    duration: f32,
    what: &str,
    warnings: &mut Vec<String>,
) -> Vec<crate::anim::ClipEvent> {
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
                events.push(crate::anim::ClipEvent { time, name: name.to_string() });
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

    #[test]
    fn strips_and_fans_become_triangle_lists() {
        assert_eq!(strip_to_list(&[0, 1, 2, 3, 4]), vec![0, 1, 2, 2, 1, 3, 2, 3, 4]);
        assert_eq!(fan_to_list(&[0, 1, 2, 3]), vec![0, 1, 2, 0, 2, 3]);
        assert!(strip_to_list(&[0, 1]).is_empty());
        assert!(fan_to_list(&[]).is_empty());
    }

    #[test]
    fn decomposes_rotation_scale_translation() {
        let t = Transform {
            translation: Vector3::new(1.0, 2.0, 3.0),
            rotation: UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 2.5),
            scale: Vector3::new(2.0, 0.5, 3.0),
        };
        let mut w = Vec::new();
        let d = decompose(&t.to_matrix(), "node 0", &mut w);
        assert!(w.is_empty());
        assert!((d.to_matrix() - t.to_matrix()).norm() < 1e-5, "{d:?}");
        // A mirrored matrix keeps its handedness in a negative z scale.
        let mirror = Matrix4::new_nonuniform_scaling(&Vector3::new(1.0, 1.0, -1.0));
        let d = decompose(&mirror, "node 0", &mut w);
        assert!((d.to_matrix() - mirror).norm() < 1e-6);
        // A rotation by 180 degrees (trace -1) is recovered too.
        let flip = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f32::consts::PI).to_homogeneous();
        assert!((decompose(&flip, "node 0", &mut w).to_matrix() - flip).norm() < 1e-5);
        let zero = Matrix4::new_nonuniform_scaling(&Vector3::new(0.0, 1.0, 1.0));
        assert!(decompose(&zero, "node 0", &mut w).is_finite());
        assert_eq!(w.len(), 1);
    }
}
