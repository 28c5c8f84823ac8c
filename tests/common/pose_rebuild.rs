//! A second, deliberately simple implementation of the pose formula in
//! `src/guide/pose_rebuild.md`: it reads the glTF file itself (the `gltf`
//! crate, no vkskin import), samples, blends and skins everything in f64
//! with plain loops and none of vkskin's jobs, from a `dump --controller`
//! document's `clips`, `layers`, `root_motion` and `ik` alone. Tests compare
//! what it rebuilds with the dump's joint matrices and vertices.

use gltf::animation::{Interpolation, Property};
use nalgebra::{Matrix4, Quaternion, Translation3, UnitQuaternion, Vector3};
use serde_json::Value;
use std::path::Path;

/// A local transform.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Trs {
    t: Vector3<f64>,
    r: Quaternion<f64>,
    s: Vector3<f64>,
}

impl Trs {
    fn matrix(&self) -> Matrix4<f64> {
        let r = UnitQuaternion::from_quaternion(self.r);
        Translation3::from(self.t).to_homogeneous()
            * r.to_homogeneous()
            * Matrix4::new_nonuniform_scaling(&self.s)
    }
}

/// A node's pose: its transform and (mesh nodes) its morph weights.
#[derive(Debug, Clone, PartialEq)]
struct NodePose {
    trs: Trs,
    weights: Vec<f64>,
}

/// A glTF binary file, parsed.
pub struct GltfFile {
    doc: gltf::Document,
    blob: Vec<u8>,
    /// Each node's parent.
    parents: Vec<Option<usize>>,
}

/// What the rebuild gives.
pub struct Rebuilt {
    /// World matrix of every node.
    pub world: Vec<Matrix4<f64>>,
    /// Positions per dumped primitive, in the dump's order.
    pub positions: Vec<Vec<[f64; 3]>>,
}

impl GltfFile {
    /// Reads a `.glb` file.
    pub fn read(path: &Path) -> Self {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let gltf = gltf::Gltf::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let blob = gltf.blob.clone().expect("a .glb with a BIN chunk");
        let doc = gltf.document;
        let mut parents = vec![None; doc.nodes().len()];
        for node in doc.nodes() {
            for child in node.children() {
                parents[child.index()] = Some(node.index());
            }
        }
        GltfFile { doc, blob, parents }
    }

    fn rest(&self) -> Vec<NodePose> {
        self.doc
            .nodes()
            .map(|node| {
                let (t, r, s) = node.transform().decomposed();
                let targets =
                    node.mesh().and_then(|m| m.primitives().next()).map_or(0, |p| p.morph_targets().len());
                let weights = node
                    .weights()
                    .or_else(|| node.mesh().and_then(|m| m.weights()))
                    .map_or_else(|| vec![0.0; targets], |w| w.iter().map(|&x| f64::from(x)).collect());
                NodePose {
                    trs: Trs {
                        t: Vector3::from(t.map(f64::from)),
                        r: Quaternion::new(
                            f64::from(r[3]),
                            f64::from(r[0]),
                            f64::from(r[1]),
                            f64::from(r[2]),
                        ),
                        s: Vector3::from(s.map(f64::from)),
                    },
                    weights,
                }
            })
            .collect()
    }

    /// Animation `index` sampled at `time` over the rest pose (step 1).
    fn sample(&self, index: usize, time: f64) -> Vec<NodePose> {
        let mut pose = self.rest();
        let animation = self.doc.animations().nth(index).expect("the dump's clip index exists");
        for channel in animation.channels() {
            let reader = channel.reader(|_| Some(&self.blob[..]));
            let times: Vec<f64> = reader.read_inputs().expect("input").map(f64::from).collect();
            let values: Vec<f64> = match reader.read_outputs().expect("output") {
                gltf::animation::util::ReadOutputs::Translations(v) => v.flatten().map(f64::from).collect(),
                gltf::animation::util::ReadOutputs::Scales(v) => v.flatten().map(f64::from).collect(),
                gltf::animation::util::ReadOutputs::Rotations(v) => {
                    v.into_f32().flatten().map(f64::from).collect()
                }
                gltf::animation::util::ReadOutputs::MorphTargetWeights(v) => {
                    v.into_f32().map(f64::from).collect()
                }
            };
            let node = &mut pose[channel.target().node().index()];
            let property = channel.target().property();
            let width = match property {
                Property::Rotation => 4,
                Property::MorphTargetWeights => node.weights.len().max(1),
                _ => 3,
            };
            let v = sample_track(&times, &values, width, channel.sampler().interpolation(), time, property);
            match property {
                Property::Translation => node.trs.t = Vector3::new(v[0], v[1], v[2]),
                Property::Scale => node.trs.s = Vector3::new(v[0], v[1], v[2]),
                Property::Rotation => node.trs.r = Quaternion::new(v[3], v[0], v[1], v[2]),
                Property::MorphTargetWeights => node.weights = v,
            }
        }
        pose
    }

    /// Rebuilds the pose `dump` (a `dump --controller` document) describes.
    pub fn rebuild(&self, dump: &Value) -> Rebuilt {
        let layers = dump["layers"].as_array().expect("layers");
        let clips = dump["clips"].as_array().expect("clips");
        let rest = self.rest();
        let mut pose = rest.clone();
        for (l, layer) in layers.iter().enumerate() {
            let members: Vec<(Vec<NodePose>, f64)> = clips
                .iter()
                .filter(|c| c["layer"].as_u64() == Some(l as u64))
                .map(|c| {
                    let index = c["index"].as_u64().unwrap() as usize;
                    (self.sample(index, c["time"].as_f64().unwrap()), c["weight"].as_f64().unwrap())
                })
                .collect();
            let blended = blend(&rest, &members);
            let weight = layer["weight"].as_f64().unwrap();
            match layer["mode"].as_str().unwrap() {
                "base" => pose = blended,
                mode if weight > 0.0 => {
                    let mut mask = vec![if layer["mask"].is_null() { 1.0 } else { 0.0 }; rest.len()];
                    for joint in layer["mask_joints"].as_array().into_iter().flatten() {
                        mask[joint["node"].as_u64().unwrap() as usize] = joint["weight"].as_f64().unwrap();
                    }
                    let reference = (mode == "additive").then(|| {
                        let r = &layer["reference"];
                        self.sample(r["index"].as_u64().unwrap() as usize, r["time"].as_f64().unwrap())
                    });
                    let morphs = layer["morphs"].as_bool().unwrap();
                    apply_layer(&mut pose, &blended, reference.as_deref(), &mask, weight, morphs);
                }
                _ => {}
            }
        }
        if let Some(node) = dump["root_motion"]["node"].as_u64() {
            let (j, rest) = (node as usize, &rest[node as usize].trs);
            let local = &mut pose[j].trs;
            local.t.x = rest.t.x;
            local.t.z = rest.t.z;
            let yaw = yaw_of(&local.r) - yaw_of(&rest.r);
            let turn = UnitQuaternion::from_axis_angle(&Vector3::y_axis(), -yaw).into_inner();
            local.r = turn * local.r;
        }
        for joint in dump["ik"].as_array().into_iter().flatten() {
            let f = |key: &str| -> Vec<f64> {
                joint[key].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
            };
            let (t, r, s) = (f("translation"), f("rotation"), f("scale"));
            pose[joint["node"].as_u64().unwrap() as usize].trs = Trs {
                t: Vector3::new(t[0], t[1], t[2]),
                r: Quaternion::new(r[3], r[0], r[1], r[2]),
                s: Vector3::new(s[0], s[1], s[2]),
            };
        }
        let world = self.world(&pose);
        let positions = dump["primitives"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let at = |k: &str| p[k].as_u64().unwrap() as usize;
                self.skin(at("mesh"), at("primitive"), at("node"), &pose, &world)
            })
            .collect();
        Rebuilt { world, positions }
    }

    /// World matrices down the node hierarchy (step 6).
    fn world(&self, pose: &[NodePose]) -> Vec<Matrix4<f64>> {
        fn of(
            file: &GltfFile,
            pose: &[NodePose],
            n: usize,
            out: &mut [Option<Matrix4<f64>>],
        ) -> Matrix4<f64> {
            if let Some(m) = out[n] {
                return m;
            }
            let parent = file.parents[n].map_or_else(Matrix4::identity, |p| of(file, pose, p, out));
            let m = parent * pose[n].trs.matrix();
            out[n] = Some(m);
            m
        }
        let mut out = vec![None; pose.len()];
        (0..pose.len()).map(|n| of(self, pose, n, &mut out)).collect()
    }

    /// One primitive morphed and skinned as the dump format says.
    fn skin(
        &self,
        mesh: usize,
        primitive: usize,
        node: usize,
        pose: &[NodePose],
        world: &[Matrix4<f64>],
    ) -> Vec<[f64; 3]> {
        let gltf_node = self.doc.nodes().nth(node).unwrap();
        let prim = self.doc.meshes().nth(mesh).unwrap().primitives().nth(primitive).unwrap();
        let reader = prim.reader(|_| Some(&self.blob[..]));
        let mut points: Vec<Vector3<f64>> =
            reader.read_positions().unwrap().map(|p| Vector3::from(p.map(f64::from))).collect();
        for (target, &w) in reader.read_morph_targets().zip(&pose[node].weights) {
            if let Some(deltas) = target.0 {
                for (p, d) in points.iter_mut().zip(deltas) {
                    *p += Vector3::from(d.map(f64::from)) * w;
                }
            }
        }
        let Some(skin) = gltf_node.skin() else {
            return points.iter().map(|p| world[node].transform_point(&(*p).into()).coords.into()).collect();
        };
        let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
        let skin_reader = skin.reader(|_| Some(&self.blob[..]));
        let inverse_binds: Vec<Matrix4<f64>> = match skin_reader.read_inverse_bind_matrices() {
            Some(m) => m.map(|m| Matrix4::from_fn(|r, c| f64::from(m[c][r]))).collect(),
            None => vec![Matrix4::identity(); joints.len()],
        };
        let mut sets: Vec<Vec<([u16; 4], [f32; 4])>> = Vec::new();
        for set in 0.. {
            let (Some(j), Some(w)) = (reader.read_joints(set), reader.read_weights(set)) else { break };
            sets.push(j.into_u16().zip(w.into_f32()).collect());
        }
        points
            .iter()
            .enumerate()
            .map(|(v, p)| {
                let mut sum = Vector3::zeros();
                let mut total = 0.0;
                for set in &sets {
                    let (js, ws) = set[v];
                    for (&j, &w) in js.iter().zip(&ws) {
                        let w = f64::from(w);
                        if w > 0.0 {
                            let m = world[joints[j as usize]] * inverse_binds[j as usize];
                            sum += m.transform_point(&(*p).into()).coords * w;
                            total += w;
                        }
                    }
                }
                (sum / total).into()
            })
            .collect()
    }
}

/// Step 2: the weighted blend of one layer's clips (rest pose for none).
fn blend(rest: &[NodePose], members: &[(Vec<NodePose>, f64)]) -> Vec<NodePose> {
    let total: f64 = members.iter().map(|(_, w)| w).sum();
    if members.is_empty() || total <= 0.0 {
        return rest.to_vec();
    }
    (0..rest.len())
        .map(|n| {
            let first = members[0].0[n].trs.r;
            let mut out = NodePose {
                trs: Trs { t: Vector3::zeros(), r: Quaternion::new(0.0, 0.0, 0.0, 0.0), s: Vector3::zeros() },
                weights: vec![0.0; rest[n].weights.len()],
            };
            for (pose, w) in members {
                let (x, w) = (&pose[n], w / total);
                out.trs.t += x.trs.t * w;
                out.trs.s += x.trs.s * w;
                let q = if x.trs.r.dot(&first) < 0.0 { -x.trs.r } else { x.trs.r };
                out.trs.r += q * w;
                for (o, &m) in out.weights.iter_mut().zip(&x.weights) {
                    *o += m * w;
                }
            }
            out.trs.r = out.trs.r.normalize();
            out
        })
        .collect()
}

/// Step 3: one layer of weight `a` onto `pose` (`morphs`: it sets morph weights).
fn apply_layer(
    pose: &mut [NodePose],
    layer: &[NodePose],
    reference: Option<&[NodePose]>,
    mask: &[f64],
    a: f64,
    morphs: bool,
) {
    for (n, out) in pose.iter_mut().enumerate() {
        let (l, w) = (&layer[n], a * mask[n]);
        match reference {
            None if !morphs => {}
            None => {
                for (m, &x) in out.weights.iter_mut().zip(&l.weights) {
                    *m += (x - *m) * a;
                }
            }
            Some(f) => {
                for ((m, &x), &y) in out.weights.iter_mut().zip(&l.weights).zip(&f[n].weights) {
                    *m += (x - y) * a;
                }
            }
        }
        if w <= 0.0 {
            continue;
        }
        out.trs = match reference {
            None if w >= 1.0 => l.trs,
            None => Trs {
                t: out.trs.t.lerp(&l.trs.t, w),
                r: nlerp(out.trs.r, l.trs.r, w),
                s: out.trs.s.lerp(&l.trs.s, w),
            },
            Some(f) => {
                let f = &f[n].trs;
                let dt = l.trs.t - f.t;
                let dr = UnitQuaternion::from_quaternion(f.r).inverse().into_inner() * l.trs.r;
                let ds = l.trs.s.zip_map(&f.s, |s, r| s / if r == 0.0 { 1.0 } else { r });
                let turn = if w >= 1.0 { dr } else { nlerp(Quaternion::identity(), dr, w) };
                Trs {
                    t: out.trs.t + dt * w,
                    r: out.trs.r * turn,
                    s: out.trs.s.component_mul(&Vector3::repeat(1.0).lerp(&ds, w)),
                }
            }
        };
    }
}

fn nlerp(a: Quaternion<f64>, b: Quaternion<f64>, t: f64) -> Quaternion<f64> {
    let b = if a.dot(&b) < 0.0 { -b } else { b };
    (a * (1.0 - t) + b * t).normalize()
}

fn yaw_of(q: &Quaternion<f64>) -> f64 {
    if q.j == 0.0 && q.w == 0.0 {
        return 0.0;
    }
    let a = (2.0 * q.j.atan2(q.w)).rem_euclid(2.0 * std::f64::consts::PI);
    if a > std::f64::consts::PI { a - 2.0 * std::f64::consts::PI } else { a }
}

/// One glTF sampler at `t` (step 1): `width` numbers per key value.
fn sample_track(
    times: &[f64],
    values: &[f64],
    width: usize,
    interpolation: Interpolation,
    t: f64,
    property: Property,
) -> Vec<f64> {
    let cubic = interpolation == Interpolation::CubicSpline;
    // Key k's value (its middle third for cubic splines).
    let value = |k: usize, part: usize| -> Vec<f64> {
        let start = if cubic { (3 * k + part) * width } else { k * width };
        values[start..start + width].to_vec()
    };
    let last = times.len() - 1;
    let k = times.iter().rposition(|&x| x <= t);
    let (k, u) = match k {
        None => return value(0, 1),
        Some(k) if k == last => return value(last, 1),
        Some(k) => (k, (t - times[k]) / (times[k + 1] - times[k])),
    };
    let rotation = property == Property::Rotation;
    let out = match interpolation {
        Interpolation::Step => value(k, 1),
        Interpolation::Linear if rotation => {
            let q = |v: Vec<f64>| Quaternion::new(v[3], v[0], v[1], v[2]);
            let (a, b) = (q(value(k, 1)), q(value(k + 1, 1)));
            let r = slerp(a, b, u);
            vec![r.i, r.j, r.k, r.w]
        }
        Interpolation::Linear => {
            value(k, 1).iter().zip(value(k + 1, 1)).map(|(a, b)| a + (b - a) * u).collect()
        }
        Interpolation::CubicSpline => {
            let dt = times[k + 1] - times[k];
            let (v0, b0, a1, v1) = (value(k, 1), value(k, 2), value(k + 1, 0), value(k + 1, 1));
            let (u2, u3) = (u * u, u * u * u);
            (0..width)
                .map(|c| {
                    (2.0 * u3 - 3.0 * u2 + 1.0) * v0[c]
                        + (u3 - 2.0 * u2 + u) * dt * b0[c]
                        + (-2.0 * u3 + 3.0 * u2) * v1[c]
                        + (u3 - u2) * dt * a1[c]
                })
                .collect()
        }
    };
    if rotation && cubic {
        let n = out.iter().map(|x| x * x).sum::<f64>().sqrt();
        return out.iter().map(|x| x / n).collect();
    }
    out
}

/// Slerp on the short arc (the spec's LINEAR rotation).
fn slerp(a: Quaternion<f64>, b: Quaternion<f64>, u: f64) -> Quaternion<f64> {
    let (a, b) = (a.normalize(), b.normalize());
    let (b, d) = if a.dot(&b) < 0.0 { (-b, -a.dot(&b)) } else { (b, a.dot(&b)) };
    if d > 1.0 - 1e-12 {
        return (a * (1.0 - u) + b * u).normalize();
    }
    let angle = d.min(1.0).acos();
    let (sa, sb) = (((1.0 - u) * angle).sin(), (u * angle).sin());
    (a * sa + b * sb) / angle.sin()
}

/// How far `dump`'s joints and vertices are from `rebuilt`, relative to
/// the vertices' bounding-box diagonal: (joint translation, joint 3x3
/// part per unit column length, vertex position) errors.
pub fn errors(dump: &Value, rebuilt: &Rebuilt) -> (f64, f64, f64) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in rebuilt.positions.iter().flatten() {
        for c in 0..3 {
            lo[c] = lo[c].min(p[c]);
            hi[c] = hi[c].max(p[c]);
        }
    }
    let diagonal = (0..3).map(|c| (hi[c] - lo[c]).powi(2)).sum::<f64>().sqrt().max(1e-9);
    let (mut translation, mut basis, mut vertex) = (0.0f64, 0.0f64, 0.0f64);
    for joint in dump["joints"].as_array().unwrap() {
        let m: Vec<f64> = joint["world"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        let r = &rebuilt.world[joint["node"].as_u64().unwrap() as usize];
        for c in 0..3 {
            let scale = (0..3).map(|row| r[(row, c)].powi(2)).sum::<f64>().sqrt().max(1e-9);
            for row in 0..3 {
                basis = basis.max((m[c * 4 + row] - r[(row, c)]).abs() / scale);
            }
            translation = translation.max((m[12 + c] - r[(c, 3)]).abs() / diagonal);
        }
    }
    for (p, rebuilt) in dump["primitives"].as_array().unwrap().iter().zip(&rebuilt.positions) {
        let dumped: Vec<f64> =
            p["positions"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(
            dumped.len(),
            rebuilt.len() * 3,
            "vertex count of mesh {} primitive {}",
            p["mesh"],
            p["primitive"]
        );
        for (d, r) in dumped.chunks(3).zip(rebuilt) {
            for c in 0..3 {
                vertex = vertex.max((d[c] - r[c]).abs() / diagonal);
            }
        }
    }
    (translation, basis, vertex)
}

/// Runs `vkskin dump MODEL --controller CONTROLLER ARGS...` and returns the
/// document (panics with the command's stderr when it fails).
pub fn dump_controller(model: &Path, controller: &Path, args: &[&str]) -> Value {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_vkskin"))
        .arg("dump")
        .arg(model)
        .arg("--controller")
        .arg(controller)
        .args(args)
        .output()
        .expect("vkskin runs");
    assert!(
        output.status.success(),
        "dump {} --controller {} {args:?}: {}",
        model.display(),
        controller.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the dump is JSON")
}

/// Dumps `model` under `controller` (RON text) at each of `cases` (extra
/// arguments), rebuilds each pose with this module and checks the dump
/// against it within 1e-5 (joint translations and vertices relative to
/// the bounding-box diagonal, joint bases per unit length). Returns the
/// documents for further checks.
pub fn check_rebuilds(model: &Path, controller: &str, cases: &[&[&str]]) -> Vec<Value> {
    // One folder per call (tests run in parallel), removed when dropped.
    let dir = tempfile::Builder::new().prefix("vkskin-rebuild-").tempdir().unwrap();
    let stem = model.file_stem().unwrap().to_string_lossy();
    let file = dir.path().join(format!("{stem}.ron"));
    std::fs::write(&file, controller).unwrap();
    let gltf = GltfFile::read(model);
    cases
        .iter()
        .map(|args| {
            let dump = dump_controller(model, &file, args);
            let rebuilt = gltf.rebuild(&dump);
            let (translation, basis, vertex) = errors(&dump, &rebuilt);
            eprintln!(
                "{stem} {args:?}: joints {translation:.1e} (basis {basis:.1e}), vertices {vertex:.1e}, clips {}",
                dump["clips"]
            );
            assert!(
                translation < 1e-5 && basis < 1e-5 && vertex < 1e-5,
                "{stem} {args:?}: rebuilt pose differs: joints {translation:e}, basis {basis:e}, vertices {vertex:e}"
            );
            dump
        })
        .collect()
}
