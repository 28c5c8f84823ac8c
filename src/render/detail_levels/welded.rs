//! Detail levels of flat-shaded primitives. Flat shading gives every face
//! its own three vertices (its own normal), so every edge is a seam that
//! meshoptimizer will not collapse across, and such a primitive would keep
//! its full list at every level (RobotExpressive, Fox). Here the copies of
//! one point are welded: the simplifier runs on the welded triangles (each
//! copy mapped to the first, the copies' normals averaged), and each
//! corner of a coarser triangle then takes the copy whose normal is
//! closest to that triangle's own, so a coarse face is still shaded
//! nearly flat. Only copies that move and texture alike are welded: the
//! same rest position, the same position in every sampled pose and the
//! same texture coordinates (a texture seam stays a seam the simplifier
//! keeps: a corner that took a copy from across it would sample another
//! part of the texture, and a crowd of Fox showed it as speckles).

/// What two copies must share to be welded: rest and posed positions
/// (`ATTRIBUTES` past the normal, and the rest position) and texture
/// coordinates, bit for bit.
type WeldKey = [u32; ATTRIBUTES + 2];

use super::{ATTRIBUTES, DETAIL_LEVELS, simplify_primitive};
use std::collections::HashMap;

/// Levels 1.. of `indices` over `positions` and `attributes` (as
/// `simplify_primitive` takes them; `uvs` per vertex where the primitive
/// has them) with the coincident copies of each point welded; `None` when
/// nothing is welded or the welded list cannot be simplified. Setup work:
/// it allocates.
pub(super) fn simplify_welded(
    indices: &[u32],
    positions: &[[f32; 3]],
    attributes: &[f32],
    uvs: Option<&[[f32; 2]]>,
) -> Option<([Vec<u32>; DETAIL_LEVELS - 1], [f32; DETAIL_LEVELS])> {
    let n = positions.len();
    let uvs_fit = uvs.is_none_or(|uvs| uvs.len() == n);
    if attributes.len() != n * ATTRIBUTES || !uvs_fit || indices.iter().any(|&i| i as usize >= n) {
        return None;
    }
    // Each vertex's first copy.
    let mut first: HashMap<WeldKey, u32> = HashMap::with_capacity(n);
    let canonical: Vec<u32> = (0..n)
        .map(|v| {
            let mut key: WeldKey = [0; ATTRIBUTES + 2];
            key[..3].copy_from_slice(&positions[v].map(f32::to_bits));
            let posed = &attributes[v * ATTRIBUTES + 3..(v + 1) * ATTRIBUTES];
            for (k, c) in key[3..ATTRIBUTES].iter_mut().zip(posed) {
                *k = c.to_bits();
            }
            if let Some(uvs) = uvs {
                key[ATTRIBUTES..].copy_from_slice(&uvs[v].map(f32::to_bits));
            }
            *first.entry(key).or_insert(v as u32)
        })
        .collect();
    if first.len() == n {
        return None;
    }
    // The welded vertices alone (the simplifier would take unused copies
    // beside the used ones for seams again), numbered in order of their
    // first copy, each with its copies' average normal.
    let mut points: Vec<u32> = Vec::with_capacity(first.len());
    let mut point_of = vec![u32::MAX; n];
    for (v, &c) in canonical.iter().enumerate() {
        if c as usize == v {
            point_of[v] = points.len() as u32;
            points.push(c);
        }
    }
    let welded_positions: Vec<[f32; 3]> = points.iter().map(|&v| positions[v as usize]).collect();
    let mut welded = Vec::with_capacity(points.len() * ATTRIBUTES);
    for &v in &points {
        welded.extend_from_slice(&attributes[v as usize * ATTRIBUTES..(v as usize + 1) * ATTRIBUTES]);
    }
    let mut sums = vec![[0.0f32; 3]; points.len()];
    for (v, &c) in canonical.iter().enumerate() {
        let sum = &mut sums[point_of[c as usize] as usize];
        for k in 0..3 {
            sum[k] += attributes[v * ATTRIBUTES + k];
        }
    }
    for (p, sum) in sums.iter().enumerate() {
        welded[p * ATTRIBUTES..p * ATTRIBUTES + 3].copy_from_slice(&normalized(*sum).unwrap_or(*sum));
    }
    // The welded triangles, without those the welding collapsed.
    let mut shadow = Vec::with_capacity(indices.len());
    for t in indices.chunks_exact(3) {
        let [a, b, c] = [t[0], t[1], t[2]].map(|i| point_of[canonical[i as usize] as usize]);
        if a != b && b != c && c != a {
            shadow.extend_from_slice(&[a, b, c]);
        }
    }
    let (mut lists, errors) = simplify_primitive(&shadow, &welded_positions, &welded)?;
    if lists[0].is_empty() {
        return None;
    }
    // Each point's copies, grouped by their first copy.
    let mut copies: Vec<u32> = (0..n as u32).collect();
    copies.sort_by_key(|&v| canonical[v as usize]);
    let group = |c: u32| {
        let start = copies.partition_point(|&v| canonical[v as usize] < c);
        let end = copies.partition_point(|&v| canonical[v as usize] <= c);
        &copies[start..end]
    };
    let normal = |v: u32| {
        let a = &attributes[v as usize * ATTRIBUTES..];
        [a[0], a[1], a[2]]
    };
    for list in &mut lists {
        for t in list.chunks_exact_mut(3) {
            for corner in t.iter_mut() {
                *corner = points[*corner as usize];
            }
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| positions[i as usize]);
            let Some(face) = normalized(cross(sub(b, a), sub(c, a))) else { continue };
            for corner in t.iter_mut() {
                let best = group(*corner)
                    .iter()
                    .copied()
                    .max_by(|&x, &y| dot(normal(x), face).total_cmp(&dot(normal(y), face)));
                *corner = best.unwrap_or(*corner);
            }
        }
    }
    Some((lists, errors))
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `v` at unit length; `None` when it has none (zero or not finite).
fn normalized(v: [f32; 3]) -> Option<[f32; 3]> {
    let length = dot(v, v).sqrt();
    (length > 0.0 && length.is_finite()).then(|| v.map(|c| c / length))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::detail_levels::tests::{attributes, sphere};

    /// `indices` over `smooth` flat shaded: each face its own three
    /// vertices, carrying its normal.
    fn flat(smooth: &[[f32; 3]], indices: &[u32]) -> (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<u32>) {
        let (mut positions, mut normals) = (Vec::new(), Vec::new());
        for t in indices.chunks_exact(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| smooth[i as usize]);
            let face = normalized(cross(sub(b, a), sub(c, a))).expect("a proper face");
            positions.extend_from_slice(&[a, b, c]);
            normals.extend_from_slice(&[face; 3]);
        }
        let flat_indices = (0..positions.len() as u32).collect();
        (positions, normals, flat_indices)
    }

    #[test]
    fn a_flat_shaded_sphere_simplifies_once_welded_and_stays_flat() {
        let (smooth, indices) = sphere(32, 64);
        let (positions, normals, indices) = flat(&smooth, &indices);
        let still = attributes(&positions, &normals, |_, p| p);
        // Every edge a seam: on its own the list gains nothing.
        let own = simplify_primitive(&indices, &positions, &still);
        assert!(own.is_none_or(|(lists, _)| lists[0].is_empty()), "flat shading keeps every edge");
        let (lists, errors) =
            simplify_welded(&indices, &positions, &still, None).expect("levels once welded");
        let mut previous = indices.len();
        for (k, list) in lists.iter().enumerate() {
            assert!(
                !list.is_empty() && list.len() < previous,
                "level {}: {} of {previous}",
                k + 1,
                list.len()
            );
            assert!(list.len() % 3 == 0 && list.iter().all(|&i| (i as usize) < positions.len()));
            previous = list.len();
        }
        assert!(errors[1] > 0.0 && errors.windows(2).all(|e| e[0] <= e[1]), "{errors:?}");
        // Each corner takes the copy that faces its (coarser) face best,
        // which is nearly always close: few corners' normals are more than
        // 45 degrees off their face's.
        let level_1 = &lists[0];
        let (mut facing, mut off) = (0.0, 0);
        for t in level_1.chunks_exact(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| positions[i as usize]);
            let face = normalized(cross(sub(b, a), sub(c, a))).expect("a proper face");
            for &corner in t {
                let d = dot(normals[corner as usize], face);
                facing += d;
                off += usize::from(d < std::f32::consts::FRAC_1_SQRT_2);
            }
        }
        let facing = facing / level_1.len() as f32;
        eprintln!("corners face their faces by {facing} on average, {off} of {} off", level_1.len());
        assert!(
            facing > 0.95 && off * 50 < level_1.len(),
            "{facing} on average, {off} of {} off",
            level_1.len()
        );
    }

    #[test]
    fn copies_that_move_apart_are_not_welded() {
        let (smooth, indices) = sphere(8, 16);
        let (positions, normals, indices) = flat(&smooth, &indices);
        // Each copy posed its own way: no two move alike.
        let apart = attributes(&positions, &normals, |v, p| [p[0] + v as f32 * 1e-3, p[1], p[2]]);
        assert!(simplify_welded(&indices, &positions, &apart, None).is_none());
    }
}
