//! The `vkskin inspect` report: what a file holds (nodes, skins, clips,
//! meshes, morph targets) and what the importer thought of it, as text or JSON.

use crate::anim::{Clip, Interpolation, NO_PARENT};
use crate::asset::Model;
use crate::text::escape;
use serde::Serialize;
use std::fmt::Write;

/// Everything `inspect` prints, as text or JSON.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The file.
    pub file: String,
    /// Nodes in glTF order.
    pub nodes: Vec<NodeInfo>,
    /// Skins in glTF order.
    pub skins: Vec<SkinInfo>,
    /// Clips in glTF order.
    pub clips: Vec<ClipInfo>,
    /// Meshes in glTF order.
    pub meshes: Vec<MeshInfo>,
    /// Importer warnings (the file loaded; these are worth knowing).
    pub warnings: Vec<String>,
}

/// One node.
#[derive(Debug, Serialize)]
pub struct NodeInfo {
    /// glTF node index.
    pub node: usize,
    /// Name ("" when unnamed).
    pub name: String,
    /// Parent node index.
    pub parent: Option<usize>,
    /// Mesh drawn by this node.
    pub mesh: Option<usize>,
    /// Skin used by this node's mesh.
    pub skin: Option<usize>,
    /// Skins that use this node as a joint.
    pub joint_of: Vec<usize>,
}

/// One skin.
#[derive(Debug, Serialize)]
pub struct SkinInfo {
    /// Skin index.
    pub skin: usize,
    /// Name.
    pub name: String,
    /// Joint node indices in skin order.
    pub joints: Vec<usize>,
    /// The skin whose palette it reads: itself, or the first skin with the
    /// same joints and inverse binds (`Rig::palette_ranges`).
    pub palette_of: usize,
}

/// One clip.
#[derive(Debug, Serialize)]
pub struct ClipInfo {
    /// Clip index.
    pub clip: usize,
    /// Name, when the file gives one.
    pub name: Option<String>,
    /// Earliest key time.
    pub start: f32,
    /// Latest key time (the loop period).
    pub duration: f32,
    /// Translation channels.
    pub translation_channels: usize,
    /// Rotation channels.
    pub rotation_channels: usize,
    /// Scale channels.
    pub scale_channels: usize,
    /// Morph-weight channels.
    pub weight_channels: usize,
    /// Interpolation kinds used.
    pub interpolations: Vec<&'static str>,
    /// Events (from the animation's `extras.vkskin_events`).
    pub events: usize,
}

/// One mesh.
#[derive(Debug, Serialize)]
pub struct MeshInfo {
    /// Mesh index.
    pub mesh: usize,
    /// Name.
    pub name: String,
    /// Morph target names (or indices when unnamed).
    pub morph_targets: Vec<String>,
    /// Triangle primitives.
    pub primitives: Vec<PrimitiveInfo>,
}

/// One primitive.
#[derive(Debug, Serialize)]
pub struct PrimitiveInfo {
    /// glTF primitive index.
    pub primitive: usize,
    /// Vertex count.
    pub vertices: usize,
    /// Triangle count.
    pub triangles: usize,
    /// Attributes present.
    pub attributes: Vec<&'static str>,
    /// Influences per vertex (0 when unskinned).
    pub influences: usize,
    /// Material index.
    pub material: Option<usize>,
}

impl Report {
    /// Gathers the report for an imported model.
    pub fn new(model: &Model) -> Self {
        let skeleton = &model.skeleton;
        let mut nodes: Vec<NodeInfo> = (0..model.joint_of_node.len())
            .map(|node| {
                let joint = model.joint_of_node[node] as usize;
                let parent = skeleton.parents()[joint];
                NodeInfo {
                    node,
                    name: skeleton.names()[joint].clone(),
                    parent: (parent != NO_PARENT).then(|| model.node_of_joint[parent as usize]),
                    mesh: None,
                    skin: None,
                    joint_of: Vec::new(),
                }
            })
            .collect();
        for instance in &model.instances {
            nodes[instance.node].mesh = Some(instance.mesh);
            nodes[instance.node].skin = instance.skin;
        }
        let skins = model
            .skins
            .iter()
            .enumerate()
            .map(|(index, skin)| {
                let joints: Vec<usize> =
                    skin.joints.iter().map(|&j| model.node_of_joint[j as usize]).collect();
                for &node in &joints {
                    if !nodes[node].joint_of.contains(&index) {
                        nodes[node].joint_of.push(index);
                    }
                }
                let ranges = model.palette_ranges();
                let mut owners = model.palette_skins().iter().map(|&o| o as usize);
                let palette_of = owners.find(|&o| ranges[o] == ranges[index]).unwrap_or(index);
                SkinInfo { skin: index, name: skin.name.clone(), joints, palette_of }
            })
            .collect();
        let clips = model.clips.iter().enumerate().map(|(i, c)| clip_info(i, c)).collect();
        let meshes = model
            .meshes
            .iter()
            .enumerate()
            .map(|(index, mesh)| MeshInfo {
                mesh: index,
                name: mesh.name.clone(),
                morph_targets: (0..mesh.target_count)
                    .map(|t| mesh.target_names.get(t).cloned().unwrap_or_else(|| t.to_string()))
                    .collect(),
                primitives: mesh
                    .primitives
                    .iter()
                    .zip(&mesh.primitive_indices)
                    .map(|(p, &primitive)| PrimitiveInfo {
                        primitive,
                        vertices: p.vertex_count(),
                        triangles: p.indices.len() / 3,
                        attributes: [
                            Some("POSITION"),
                            p.normals.as_ref().map(|_| "NORMAL"),
                            p.tangents.as_ref().map(|_| "TANGENT"),
                            p.uvs.as_ref().map(|_| "TEXCOORD_0"),
                            p.influences.as_ref().map(|_| "JOINTS_0/WEIGHTS_0"),
                            p.influences.as_ref().filter(|i| i.per_vertex > 4).map(|_| "JOINTS_1/WEIGHTS_1"),
                        ]
                        .into_iter()
                        .flatten()
                        .collect(),
                        influences: p.influences.as_ref().map_or(0, |i| i.per_vertex),
                        material: p.material,
                    })
                    .collect(),
            })
            .collect();
        Report { file: model.file.clone(), nodes, skins, clips, meshes, warnings: model.warnings.clone() }
    }

    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Human-readable text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", escape(&self.file));
        let _ = writeln!(out, "\nnodes ({}):", self.nodes.len());
        self.write_tree(&mut out);
        let _ = writeln!(out, "\nskins ({}):", self.skins.len());
        for s in &self.skins {
            let _ = write!(out, "  skin {} {:?}: {} joints", s.skin, s.name, s.joints.len());
            let _ = match s.palette_of == s.skin {
                true => writeln!(out),
                false => writeln!(
                    out,
                    ", the palette of skin {} (the same joints and inverse binds)",
                    s.palette_of
                ),
            };
        }
        let _ = writeln!(out, "\nclips ({}):", self.clips.len());
        for c in &self.clips {
            let name = c.name.as_deref().map_or("(unnamed)".to_string(), |n| format!("{n:?}"));
            let _ = writeln!(
                out,
                "  clip {} {}: {:.3}..{:.3} s, channels T{} R{} S{} W{}, {}{}",
                c.clip,
                name,
                c.start,
                c.duration,
                c.translation_channels,
                c.rotation_channels,
                c.scale_channels,
                c.weight_channels,
                c.interpolations.join("/"),
                // Only files with vkskin_events extras have any; keep other listings unchanged.
                if c.events > 0 { format!(", {} events", c.events) } else { String::new() }
            );
        }
        let _ = writeln!(out, "\nmeshes ({}):", self.meshes.len());
        for m in &self.meshes {
            let _ = writeln!(out, "  mesh {} {:?}", m.mesh, m.name);
            if !m.morph_targets.is_empty() {
                let _ = writeln!(out, "    morph targets: {}", escape(&m.morph_targets.join(", ")));
            }
            for p in &m.primitives {
                let _ = writeln!(
                    out,
                    "    primitive {}: {} vertices, {} triangles, {}{}",
                    p.primitive,
                    p.vertices,
                    p.triangles,
                    p.attributes.join(" "),
                    if p.influences > 0 { format!(", {} influences", p.influences) } else { String::new() }
                );
            }
        }
        let _ = writeln!(out, "\nwarnings ({}):", self.warnings.len());
        for w in &self.warnings {
            let _ = writeln!(out, "  {w}");
        }
        // Warnings are things accepted but not as the file meant them
        // (ignored channels, extensions, singular matrices of unused joints).
        let _ = match self.warnings.len() {
            0 => writeln!(out, "\nvalid: the file passed every check"),
            n => writeln!(out, "\nvalid, with {n} warning{} (listed above)", if n == 1 { "" } else { "s" }),
        };
        out
    }

    /// The node tree, depth first, children in node order. Iterative, with
    /// child lists built once: a hierarchy 100,000 deep or wide must neither
    /// overflow the stack nor take quadratic time.
    fn write_tree(&self, out: &mut String) {
        let mut children = vec![Vec::new(); self.nodes.len()];
        let mut stack = Vec::new();
        for n in &self.nodes {
            match n.parent {
                Some(p) => children[p].push(n.node),
                None => stack.push((n.node, 1usize)),
            }
        }
        stack.reverse();
        while let Some((node, depth)) = stack.pop() {
            self.write_node(out, node, depth);
            stack.extend(children[node].iter().rev().map(|&c| (c, depth + 1)));
        }
    }

    fn write_node(&self, out: &mut String, node: usize, depth: usize) {
        /// Deeper levels are not indented further (their depth is printed).
        const MAX_INDENT: usize = 32;
        let n = &self.nodes[node];
        let mut tags = Vec::new();
        if depth > MAX_INDENT {
            tags.push(format!("depth {depth}"));
        }
        if !n.joint_of.is_empty() {
            tags.push(format!("joint of skin {:?}", n.joint_of));
        }
        if let Some(mesh) = n.mesh {
            tags.push(format!("mesh {mesh}"));
        }
        if let Some(skin) = n.skin {
            tags.push(format!("skinned by {skin}"));
        }
        let tags = if tags.is_empty() { String::new() } else { format!(" [{}]", tags.join(", ")) };
        let indent = depth.min(MAX_INDENT) * 2;
        let _ = writeln!(out, "{:indent$}{} {:?}{}", "", node, n.name, tags);
    }
}

fn clip_info(index: usize, clip: &Clip) -> ClipInfo {
    let count =
        |f: &dyn Fn(&crate::anim::JointTracks) -> bool| clip.joint_tracks.iter().filter(|j| f(j)).count();
    let mut kinds: Vec<Interpolation> = clip
        .joint_tracks
        .iter()
        .flat_map(|j| {
            [
                j.translation.as_ref().map(|t| t.interpolation),
                j.rotation.as_ref().map(|t| t.interpolation),
                j.scale.as_ref().map(|t| t.interpolation),
            ]
        })
        .flatten()
        .chain(clip.morph_tracks.iter().map(|m| m.interpolation))
        .collect();
    kinds.sort_by_key(|k| k.name());
    kinds.dedup();
    ClipInfo {
        clip: index,
        name: clip.name.clone(),
        start: clip.start(),
        duration: clip.duration,
        translation_channels: count(&|j| j.translation.is_some()),
        rotation_channels: count(&|j| j.rotation.is_some()),
        scale_channels: count(&|j| j.scale.is_some()),
        weight_channels: clip.morph_tracks.len(),
        interpolations: kinds.into_iter().map(Interpolation::name).collect(),
        events: clip.events.len(),
    }
}
