//! The default character's body: lofted tubes (torso with neck, arms with
//! hands, legs), ellipsoids (head, eyes, nose, mouth, jaw) and shoes, with
//! smooth skin weights and morph targets: "Breathe" (the chest) and the
//! face's "Blink", "Smile" and "MouthOpen".
//!
//! Deterministic geometry: nothing here reads a file or calls the platform's
//! maths library.
//!
//! Each part is a loft: rings of vertices along a path. All vertices of a ring
//! share one influence pair, blended with a smoothstep across each joint, so a
//! bent elbow or knee stretches the tube smoothly instead of folding one ring.
//! Limbs are single tubes through their joints (no separate capsules that
//! would open a gap or intersect when bent).

use super::math::DetMath;
use super::skeleton::{J, LEG_X};
use crate::asset::glb_writer::{PrimitiveData, TargetData};
use nalgebra::Vector3;
use std::ops::Range;

type V3 = Vector3<f32>;

/// The body's morph targets, in glTF target order ("Breathe" first, where
/// it was before the face's were added).
pub const TARGETS: [&str; TARGET_COUNT] = ["Breathe", "Blink", "Smile", "MouthOpen"];
/// Number of morph targets.
pub const TARGET_COUNT: usize = 4;
/// Index of each target in [`TARGETS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Target {
    Breathe,
    Blink,
    Smile,
    MouthOpen,
}

/// Materials of the body, in glTF material order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mat {
    /// Face and hands.
    Skin,
    /// Torso and upper arms.
    Shirt,
    /// Pelvis and legs.
    Trousers,
    /// Feet.
    Shoes,
    /// Eyes and hair.
    Dark,
}

/// Materials with their names and linear base colours.
pub const MATERIALS: [(Mat, &str, [f32; 4]); 5] = [
    (Mat::Skin, "Skin", [0.80, 0.55, 0.42, 1.0]),
    (Mat::Shirt, "Shirt", [0.16, 0.36, 0.70, 1.0]),
    (Mat::Trousers, "Trousers", [0.18, 0.18, 0.22, 1.0]),
    (Mat::Shoes, "Shoes", [0.42, 0.22, 0.10, 1.0]),
    (Mat::Dark, "Dark", [0.05, 0.04, 0.04, 1.0]),
];

/// Two joints and the weight of the second; the first gets the rest.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Influence(J, J, f32);

impl Influence {
    fn rigid(j: J) -> Self {
        Influence(j, j, 0.0)
    }
}

/// One ring of a loft: `center + cos(a) * u + sin(a) * v` (with `power` < 1
/// squaring the section off).
#[derive(Debug, Clone, Copy)]
struct Ring {
    center: V3,
    u: V3,
    v: V3,
    power: f32,
    influence: Influence,
    /// Material of the band from this ring to the next.
    material: Mat,
    /// Outward growth of this ring in the "Breathe" target (fraction of its radius).
    breathe: f32,
}

/// The whole body as one indexed mesh with a material per triangle.
#[derive(Default)]
struct Builder {
    positions: Vec<V3>,
    influences: Vec<Influence>,
    /// Each vertex's offset in each morph target (see [`TARGETS`]).
    deltas: Vec<[V3; TARGET_COUNT]>,
    triangles: Vec<([u32; 3], Mat)>,
}

fn smoothstep(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// Signed power that keeps the sign: squares off a circle for `p` < 1.
fn spow(x: f32, p: f32) -> f32 {
    x.signum() * x.abs().dpowf(p)
}

impl Builder {
    fn vertex(&mut self, p: V3, influence: Influence, breathe: V3) -> u32 {
        self.positions.push(p);
        self.influences.push(influence);
        let mut deltas = [V3::zeros(); TARGET_COUNT];
        deltas[Target::Breathe as usize] = breathe;
        self.deltas.push(deltas);
        (self.positions.len() - 1) as u32
    }

    /// Rings joined into a tube, closed at both ends by a pole vertex each.
    /// Triangles wind counter-clockwise seen from outside when `v = d x u`
    /// for a path running along `d`.
    fn loft(&mut self, rings: &[Ring], segments: usize, start: V3, end: V3) {
        let (Some(first), Some(last)) = (rings.first(), rings.last()) else { return };
        let start_pole = self.vertex(start, first.influence, V3::zeros());
        let base = self.positions.len() as u32;
        for r in rings {
            for s in 0..segments {
                let a = std::f32::consts::TAU * s as f32 / segments as f32;
                let off = r.u * spow(a.dcos(), r.power) + r.v * spow(a.dsin(), r.power);
                // Breathing pushes the chest out more at the front (+Z).
                let front = 1.0 + 0.8 * off.normalize().z.max(0.0);
                self.vertex(r.center + off, r.influence, off * r.breathe * front);
            }
        }
        let end_pole = self.vertex(end, last.influence, V3::zeros());
        let n = segments as u32;
        let at = |ring: usize, s: u32| base + ring as u32 * n + s % n;
        for s in 0..n {
            self.triangles.push(([start_pole, at(0, s + 1), at(0, s)], first.material));
            let k = rings.len() - 1;
            self.triangles.push(([end_pole, at(k, s), at(k, s + 1)], last.material));
        }
        for (i, r) in rings.iter().enumerate().take(rings.len() - 1) {
            for s in 0..n {
                let (a, b, c, d) = (at(i, s), at(i, s + 1), at(i + 1, s + 1), at(i + 1, s));
                self.triangles.push(([a, b, d], r.material));
                self.triangles.push(([b, c, d], r.material));
            }
        }
    }

    /// An ellipsoid bound rigidly to `joint`; its vertices' indices.
    fn ellipsoid(
        &mut self,
        center: V3,
        radii: V3,
        rings: usize,
        segments: usize,
        joint: J,
        material: Mat,
    ) -> Range<usize> {
        let first = self.positions.len();
        let list: Vec<Ring> = (1..rings)
            .map(|i| {
                let t = std::f32::consts::PI * i as f32 / rings as f32;
                let (s, c) = t.dsin_cos();
                Ring {
                    center: center - V3::y() * radii.y * c,
                    u: V3::x() * radii.x * s,
                    v: -V3::z() * radii.z * s,
                    power: 1.0,
                    influence: Influence::rigid(joint),
                    material,
                    breathe: 0.0,
                }
            })
            .collect();
        self.loft(&list, segments, center - V3::y() * radii.y, center + V3::y() * radii.y);
        first..self.positions.len()
    }

    /// Sets the offset of `vertices` in `target` to `offset(position)`.
    fn shape(&mut self, vertices: Range<usize>, target: Target, offset: impl Fn(V3) -> V3) {
        for v in vertices {
            self.deltas[v][target as usize] = offset(self.positions[v]);
        }
    }
}

/// A profile key: arc length along the path and the section's two radii.
type Key = (f32, f32, f32);

/// Positions along a polyline by arc length, extrapolated past its ends.
struct Path {
    points: Vec<V3>,
    lengths: Vec<f32>,
}

impl Path {
    fn new(points: &[V3]) -> Self {
        let mut lengths = vec![0.0];
        for w in points.windows(2) {
            let l = lengths.last().copied().unwrap_or(0.0) + (w[1] - w[0]).norm();
            lengths.push(l);
        }
        Path { points: points.to_vec(), lengths }
    }

    /// Arc length of point `i`.
    fn s(&self, i: usize) -> f32 {
        self.lengths.get(i).copied().unwrap_or(0.0)
    }

    fn len(&self) -> f32 {
        self.lengths.last().copied().unwrap_or(0.0)
    }

    fn at(&self, s: f32) -> V3 {
        let n = self.points.len();
        if n < 2 {
            return self.points.first().copied().unwrap_or_else(V3::zeros);
        }
        let seg = (1..n).find(|&i| self.lengths[i] >= s).unwrap_or(n - 1);
        let (a, b) = (self.points[seg - 1], self.points[seg]);
        let (sa, sb) = (self.lengths[seg - 1], self.lengths[seg]);
        let t = if sb > sa { (s - sa) / (sb - sa) } else { 0.0 };
        a + (b - a) * t
    }

    /// Direction at `s`, smoothed across corners.
    fn direction(&self, s: f32) -> V3 {
        let d = self.at(s + 0.04) - self.at(s - 0.04);
        d.try_normalize(1e-9).unwrap_or_else(V3::y)
    }
}

/// Radii at `s`: cosine interpolation between profile keys (zero slope at
/// each key, so no creases).
fn radii(profile: &[Key], s: f32) -> (f32, f32) {
    let Some(&(s0, x0, z0)) = profile.first() else { return (0.0, 0.0) };
    if s <= s0 {
        return (x0, z0);
    }
    for w in profile.windows(2) {
        let ((sa, xa, za), (sb, xb, zb)) = (w[0], w[1]);
        if s <= sb {
            let t = if sb > sa { (s - sa) / (sb - sa) } else { 1.0 };
            let t = 0.5 - 0.5 * (std::f32::consts::PI * t).dcos();
            return (xa + (xb - xa) * t, za + (zb - za) * t);
        }
    }
    profile.last().map_or((0.0, 0.0), |&(_, x, z)| (x, z))
}

/// The influence at arc length `s` of a chain of bones starting at the given
/// arc lengths, blended over `±half_width` around each joint.
fn chain_influence(chain: &[(J, f32, f32)], s: f32) -> Influence {
    let Some(&(mut current, _, _)) = chain.first() else { return Influence::rigid(J::Root) };
    for w in chain.windows(2) {
        let (prev, (next, start, half)) = (w[0].0, w[1]);
        if s < start - half {
            return Influence::rigid(current);
        }
        if s < start + half {
            return Influence(prev, next, smoothstep((s - (start - half)) / (2.0 * half)));
        }
        current = next;
    }
    Influence::rigid(current)
}

/// How one tube is shaped and skinned.
struct Tube<'a> {
    path: &'a Path,
    profile: &'a [Key],
    chain: &'a [(J, f32, f32)],
    /// Section axis `u` is this direction made perpendicular to the path.
    side: V3,
    power: f32,
    segments: usize,
    spacing: f32,
    /// Material of the band starting at arc length `s`.
    material: &'a dyn Fn(f32) -> Mat,
    breathe: &'a dyn Fn(f32) -> f32,
}

impl Tube<'_> {
    fn ring(&self, s: f32, scale: f32, offset: f32) -> Ring {
        let d = self.path.direction(s);
        let u = (self.side - d * self.side.dot(&d)).try_normalize(1e-9).unwrap_or_else(V3::x);
        let v = d.cross(&u);
        let (rx, rz) = radii(self.profile, s);
        Ring {
            center: self.path.at(s) + d * offset,
            u: u * rx * scale,
            v: v * rz * scale,
            power: self.power,
            influence: chain_influence(self.chain, s),
            material: (self.material)(s),
            breathe: (self.breathe)(s),
        }
    }

    /// Rings every `spacing` along the path plus rounded caps at both ends.
    fn build(&self, b: &mut Builder) {
        const CAP: usize = 4;
        let len = self.path.len();
        let count = ((len / self.spacing).ceil() as usize).max(1);
        let mut rings = Vec::new();
        let (r0, _) = radii(self.profile, 0.0);
        let (r1, _) = radii(self.profile, len);
        for i in (1..CAP).rev() {
            let a = std::f32::consts::FRAC_PI_2 * i as f32 / CAP as f32;
            rings.push(self.ring(0.0, a.dcos(), -r0 * a.dsin()));
        }
        for i in 0..=count {
            rings.push(self.ring(len * i as f32 / count as f32, 1.0, 0.0));
        }
        for i in 1..CAP {
            let a = std::f32::consts::FRAC_PI_2 * i as f32 / CAP as f32;
            rings.push(self.ring(len, a.dcos(), r1 * a.dsin()));
        }
        let start = self.path.at(0.0) - self.path.direction(0.0) * r0;
        let end = self.path.at(len) + self.path.direction(len) * r1;
        b.loft(&rings, self.segments, start, end);
    }
}

/// The left joint `j` on the side of `sign` (+1 left, -1 right).
fn mirror(j: J, sign: f32) -> J {
    if sign > 0.0 {
        return j;
    }
    match j {
        J::ShoulderL => J::ShoulderR,
        J::UpperArmL => J::UpperArmR,
        J::LowerArmL => J::LowerArmR,
        J::HandL => J::HandR,
        J::UpperLegL => J::UpperLegR,
        J::LowerLegL => J::LowerLegR,
        J::FootL => J::FootR,
        J::ToesL => J::ToesR,
        other => other,
    }
}

fn torso(b: &mut Builder) {
    let pts: Vec<V3> =
        [(0.84, 0.0), (1.0, -0.012), (1.12, -0.005), (1.3, 0.012), (1.46, 0.0), (1.53, 0.0), (1.66, 0.018)]
            .iter()
            .map(|&(y, z)| V3::new(0.0, y, z))
            .collect();
    let path = Path::new(&pts);
    // Keys by height above the crotch (the path is nearly vertical).
    let profile: Vec<Key> = [
        (0.84, 0.075, 0.065),
        (0.88, 0.135, 0.095),
        (0.95, 0.158, 0.105),
        (1.03, 0.16, 0.108),
        (1.11, 0.143, 0.098),
        (1.2, 0.152, 0.104),
        (1.3, 0.168, 0.114),
        (1.38, 0.176, 0.112),
        (1.44, 0.166, 0.098),
        (1.48, 0.118, 0.076),
        (1.51, 0.062, 0.058),
        (1.56, 0.056, 0.055),
        (1.66, 0.05, 0.05),
    ]
    .iter()
    .map(|&(y, x, z)| (y - 0.84, x, z))
    .collect();
    let s = |j: J| j.bind_position().y - 0.84;
    let chain = [
        (J::Hips, 0.0, 0.0),
        (J::Spine, s(J::Spine), 0.07),
        (J::Chest, s(J::Chest), 0.08),
        (J::Neck, s(J::Neck), 0.03),
        (J::Head, s(J::Head) + 0.02, 0.03),
    ];
    let material = |s: f32| match s + 0.84 {
        y if y < 1.04 => Mat::Trousers,
        y if y < 1.5 => Mat::Shirt,
        _ => Mat::Skin,
    };
    let breathe = |s: f32| {
        let y = s + 0.84;
        // A bump over the ribcage, none at the belt or the collar.
        0.09 * (1.0 - ((y - 1.3) / 0.17).powi(2)).max(0.0)
    };
    Tube {
        path: &path,
        profile: &profile,
        chain: &chain,
        side: V3::x(),
        power: 0.9,
        segments: 22,
        spacing: 0.025,
        material: &material,
        breathe: &breathe,
    }
    .build(b);
    // The seat and crotch follow the thigh on their side part of the way, so
    // the pelvis bends with a raised leg instead of sticking out behind it.
    for (p, inf) in b.positions.iter().zip(b.influences.iter_mut()) {
        if p.y < 1.0 && *inf == Influence::rigid(J::Hips) {
            let leg = if p.x >= 0.0 { J::UpperLegL } else { J::UpperLegR };
            let w = 0.5 * smoothstep((1.0 - p.y) / 0.12) * smoothstep(p.x.abs() / 0.07);
            *inf = Influence(J::Hips, leg, w);
        }
    }
}

fn arm(b: &mut Builder, sign: f32) {
    let m = |v: V3| V3::new(v.x * sign, v.y, v.z);
    let wrist = J::HandL.bind_position();
    let pts = [
        V3::new(0.13, 1.45, 0.0),
        J::UpperArmL.bind_position(),
        J::LowerArmL.bind_position(),
        wrist,
        wrist + V3::new(0.012, -0.08, 0.008),
        wrist + V3::new(0.02, -0.17, 0.012),
    ];
    let pts: Vec<V3> = pts.iter().map(|&p| m(p)).collect();
    let path = Path::new(&pts);
    let (s1, s2, s3, s4) = (path.s(1), path.s(2), path.s(3), path.s(4));
    let profile = [
        (0.0, 0.046, 0.046),
        (s1, 0.053, 0.056),
        (s1 + 0.12, 0.047, 0.05),
        (s2, 0.039, 0.041),
        (s2 + 0.07, 0.042, 0.045),
        (s3 - 0.01, 0.027, 0.032),
        (s4, 0.022, 0.046),
        (s4 + 0.03, 0.02, 0.044),
        (path.len(), 0.013, 0.028),
    ];
    let chain = [
        (mirror(J::ShoulderL, sign), 0.0, 0.0),
        (mirror(J::UpperArmL, sign), s1, 0.05),
        (mirror(J::LowerArmL, sign), s2, 0.06),
        (mirror(J::HandL, sign), s3, 0.03),
    ];
    let material = move |s: f32| if s < s2 - 0.05 { Mat::Shirt } else { Mat::Skin };
    Tube {
        path: &path,
        profile: &profile,
        chain: &chain,
        side: V3::x() * sign,
        power: 1.0,
        segments: 12,
        spacing: 0.024,
        material: &material,
        breathe: &|_| 0.0,
    }
    .build(b);
}

fn leg(b: &mut Builder, sign: f32) {
    let x = LEG_X * sign;
    let pts = [
        V3::new(x * 0.8, 0.99, 0.0),
        J::UpperLegL.bind_position(),
        J::LowerLegL.bind_position(),
        J::FootL.bind_position(),
        J::FootL.bind_position() - V3::new(0.0, 0.035, 0.0),
    ];
    let pts: Vec<V3> = pts.iter().map(|p| V3::new(p.x * sign, p.y, p.z)).collect();
    let path = Path::new(&pts);
    let (s1, s2, s3) = (path.s(1), path.s(2), path.s(3));
    let profile = [
        (0.0, 0.08, 0.085),
        (s1, 0.09, 0.094),
        (s1 + 0.15, 0.08, 0.085),
        (s2 - 0.1, 0.064, 0.068),
        (s2, 0.056, 0.06),
        (s2 + 0.12, 0.06, 0.068),
        (s3 - 0.15, 0.046, 0.05),
        (s3, 0.04, 0.043),
        (path.len(), 0.041, 0.044),
    ];
    let chain = [
        (J::Hips, 0.0, 0.0),
        (mirror(J::UpperLegL, sign), s1, 0.07),
        (mirror(J::LowerLegL, sign), s2, 0.07),
        (mirror(J::FootL, sign), s3, 0.035),
    ];
    Tube {
        path: &path,
        profile: &profile,
        chain: &chain,
        side: V3::x() * sign,
        power: 1.0,
        segments: 14,
        spacing: 0.027,
        material: &|_| Mat::Trousers,
        breathe: &|_| 0.0,
    }
    .build(b);
}

fn shoe(b: &mut Builder, sign: f32) {
    let x = LEG_X * sign;
    let ball = J::ToesL.bind_position().z;
    // Keys along the foot: (z, half width, height).
    let keys = [
        (-0.085, 0.036, 0.075),
        (-0.06, 0.045, 0.105),
        (0.0, 0.05, 0.125),
        (0.06, 0.053, 0.09),
        (ball, 0.056, 0.066),
        (0.19, 0.05, 0.056),
        (0.215, 0.034, 0.044),
    ];
    let mut rings = Vec::new();
    let (z0, z1) = (keys[0].0, keys[keys.len() - 1].0);
    let count = 18;
    for i in 0..=count {
        let z = z0 + (z1 - z0) * i as f32 / count as f32;
        let profile: Vec<Key> = keys.iter().map(|&(z, w, h)| (z, w, h)).collect();
        let (w, h) = radii(&profile, z);
        let blend = smoothstep((z - (ball - 0.035)) / 0.07);
        rings.push(Ring {
            center: V3::new(x, h * 0.5, z),
            u: V3::x() * w,
            v: V3::y() * h * 0.5,
            power: 0.6,
            influence: Influence(mirror(J::FootL, sign), mirror(J::ToesL, sign), blend),
            material: Mat::Shoes,
            breathe: 0.0,
        });
    }
    let start = V3::new(x, keys[0].2 * 0.5, z0 - 0.012);
    let end = V3::new(x, keys[keys.len() - 1].2 * 0.5, z1 + 0.012);
    b.loft(&rings, 16, start, end);
}

fn head(b: &mut Builder) {
    let c = V3::new(0.0, 1.705, 0.012);
    b.ellipsoid(c, V3::new(0.088, 0.112, 0.1), 16, 24, J::Head, Mat::Skin);
    // Hair: a slightly larger cap over the top and back of the head.
    b.ellipsoid(c + V3::new(0.0, 0.022, -0.03), V3::new(0.095, 0.105, 0.11), 16, 24, J::Head, Mat::Dark);
    b.ellipsoid(V3::new(0.0, 1.685, 0.108), V3::new(0.014, 0.022, 0.02), 6, 8, J::Head, Mat::Skin);
    for sign in [1.0, -1.0] {
        let eye = V3::new(0.033 * sign, 1.716, 0.091);
        let radii = V3::new(0.015, 0.017, 0.013);
        let vertices = b.ellipsoid(eye, radii, 6, 8, J::Head, Mat::Dark);
        // Blink: the upper lid comes down, the eye squashed to a dark line
        // just under its middle (mostly behind the face's skin).
        b.shape(vertices, Target::Blink, |p| {
            let y = eye.y - 0.35 * radii.y + (p.y - eye.y) * 0.12;
            V3::new(0.0, y - p.y, 0.0)
        });
    }
    // The mouth: a dark slit on the face, under the nose.
    let mouth = V3::new(0.0, 1.655, 0.097);
    let half_width = 0.026;
    let vertices = b.ellipsoid(mouth, V3::new(half_width, 0.005, 0.012), 6, 12, J::Head, Mat::Dark);
    // Smile: the corners rise and the slit widens a little.
    b.shape(vertices.clone(), Target::Smile, |p| {
        let side = (p.x - mouth.x) / half_width;
        V3::new(0.12 * (p.x - mouth.x), 0.009 * side * side, 0.0)
    });
    // Open: the lower lip drops (the jaw opens with it, see the Talk clip)
    // and the slit comes forward a little so the skin does not cover it.
    b.shape(vertices, Target::MouthOpen, |p| {
        let below = ((mouth.y - p.y) / 0.005).clamp(0.0, 1.0);
        V3::new(-0.1 * (p.x - mouth.x), -0.016 * below - 0.004, 0.004)
    });
    // Jaw and chin: without them an ellipsoid head seems to look upwards.
    // On the jaw joint, which drops the chin as the mouth opens.
    b.ellipsoid(V3::new(0.0, 1.635, 0.03), V3::new(0.06, 0.045, 0.06), 8, 16, J::Jaw, Mat::Skin);
    // Ears.
    for sign in [1.0, -1.0] {
        let ear = V3::new(0.088 * sign, 1.7, 0.0);
        b.ellipsoid(ear, V3::new(0.012, 0.025, 0.018), 6, 8, J::Head, Mat::Skin);
    }
}

/// Area-weighted vertex normals of `positions`.
fn normals(positions: &[V3], triangles: &[([u32; 3], Mat)]) -> Vec<V3> {
    let mut n = vec![V3::zeros(); positions.len()];
    for ([a, b, c], _) in triangles {
        let (a, b, c) = (*a as usize, *b as usize, *c as usize);
        let face = (positions[b] - positions[a]).cross(&(positions[c] - positions[a]));
        n[a] += face;
        n[b] += face;
        n[c] += face;
    }
    n.iter().map(|v| v.try_normalize(1e-12).unwrap_or_else(V3::y)).collect()
}

/// The body split into one primitive per material (in `MATERIALS` order),
/// each with every morph target of [`TARGETS`].
pub fn body() -> Vec<PrimitiveData> {
    let mut b = Builder::default();
    torso(&mut b);
    for sign in [1.0, -1.0] {
        arm(&mut b, sign);
        leg(&mut b, sign);
        shoe(&mut b, sign);
    }
    head(&mut b);

    let base_normals = normals(&b.positions, &b.triangles);
    // Each target's normals: those of the mesh with the target fully on.
    let target_normals: Vec<Vec<V3>> = (0..TARGET_COUNT)
        .map(|t| {
            let moved: Vec<V3> = b.positions.iter().zip(&b.deltas).map(|(p, d)| p + d[t]).collect();
            normals(&moved, &b.triangles)
        })
        .collect();

    let mut out = Vec::new();
    for (m, (mat, _, _)) in MATERIALS.iter().enumerate() {
        let mut local = vec![u32::MAX; b.positions.len()];
        let mut prim = PrimitiveData { material: Some(m), ..Default::default() };
        let mut targets = vec![TargetData::default(); TARGET_COUNT];
        for (tri, _) in b.triangles.iter().filter(|(_, tm)| tm == mat) {
            for &g in tri {
                let g = g as usize;
                if local[g] == u32::MAX {
                    local[g] = prim.positions.len() as u32;
                    let Influence(j0, j1, w) = b.influences[g];
                    prim.positions.push(b.positions[g].into());
                    prim.normals.push(base_normals[g].into());
                    prim.joints.push([j0.index() as u16, j1.index() as u16, 0, 0]);
                    prim.weights.push([1.0 - w, w, 0.0, 0.0]);
                    for (t, target) in targets.iter_mut().enumerate() {
                        target.positions.push(b.deltas[g][t].into());
                        target.normals.push((target_normals[t][g] - base_normals[g]).into());
                    }
                }
                prim.indices.push(local[g]);
            }
        }
        if !prim.indices.is_empty() {
            prim.targets = targets;
            out.push(prim);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_is_closed_outward_and_skinned() {
        let prims = body();
        let vertices: usize = prims.iter().map(|p| p.positions.len()).sum();
        assert!((2000..=6000).contains(&vertices), "{vertices} vertices");
        // Positive signed volume: triangles wind counter-clockwise seen from outside.
        let mut volume = 0.0f64;
        for p in &prims {
            for t in p.indices.chunks(3) {
                let [a, b, c] = [t[0], t[1], t[2]].map(|i| V3::from(p.positions[i as usize]));
                volume += f64::from(a.dot(&b.cross(&c))) / 6.0;
            }
            for w in &p.weights {
                assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6);
            }
        }
        assert!(volume > 0.03, "volume {volume}");
    }
}
