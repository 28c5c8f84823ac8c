//! Meshes and materials: each triangle primitive's vertex streams (checked
//! finite and as long as POSITION), its indices as a triangle list, its
//! skin influences (checked, clamped and renormalised) and morph targets;
//! the materials' base colours and images.
//!
//! Primitives that draw no triangles are skipped with a warning; nothing
//! here reads nodes, skins' matrices or clips.

use crate::anim::{Influences, MeshPrimitive, MorphDeltas, MorphTarget, Skin};
use crate::asset::accessor::Reader;
use crate::asset::error::{AssetError, invalid};
use crate::asset::model::{Material, Mesh};
use crate::asset::validate;
use crate::text::label;
use gltf::json::{
    self,
    mesh::{Mode, Semantic},
    validation::Checked,
};

/// Skin weight sums further than this from 1 earn a warning (all are renormalised).
const WEIGHT_SUM_TOLERANCE: f32 = 1e-3;

pub(super) fn build_materials(root: &json::Root) -> Vec<Material> {
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

pub(super) fn build_mesh(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_and_fans_become_triangle_lists() {
        assert_eq!(strip_to_list(&[0, 1, 2, 3, 4]), vec![0, 1, 2, 2, 1, 3, 2, 3, 4]);
        assert_eq!(fan_to_list(&[0, 1, 2, 3]), vec![0, 1, 2, 0, 2, 3]);
        assert!(strip_to_list(&[0, 1]).is_empty());
        assert!(fan_to_list(&[]).is_empty());
    }
}
