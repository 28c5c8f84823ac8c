//! Checks on graph structure and values that gltf-json does not make: node
//! hierarchy, scene roots, key times, finite values, rotations, inverse
//! bind matrices. Each error names the offending item; callers prefix the
//! element.
//!
//! Checks only: nothing here reads a file or changes a value.

use super::error::{AssetError, invalid};

/// The node hierarchy in parent-before-child order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeOrder {
    /// Node indices, each parent before its children: depth-first from the
    /// roots in ascending index, children in listed order.
    pub order: Vec<usize>,
    /// Parent of each node, `None` for roots.
    pub parent: Vec<Option<usize>>,
}

/// Orders nodes given each node's listed children, rejecting children out of
/// range, nodes with two parents and cycles.
pub fn node_order(children: &[Vec<usize>]) -> Result<NodeOrder, AssetError> {
    let n = children.len();
    let mut parent: Vec<Option<usize>> = vec![None; n];
    for (p, kids) in children.iter().enumerate() {
        for &c in kids {
            if c >= n {
                return Err(invalid!("node {p}: child {c} does not exist ({n} nodes)"));
            }
            if c == p {
                return Err(invalid!("node {p} is its own child"));
            }
            if let Some(other) = parent[c] {
                return Err(if other == p {
                    invalid!("node {p} lists child {c} twice")
                } else {
                    invalid!("node {c} has two parents: {other} and {p}")
                });
            }
            parent[c] = Some(p);
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut stack = Vec::new();
    for root in (0..n).filter(|&i| parent[i].is_none()) {
        stack.push(root);
        while let Some(node) = stack.pop() {
            order.push(node);
            // Reversed so children come out in listed order.
            stack.extend(children[node].iter().rev());
        }
    }
    if order.len() < n {
        // Every node has at most one parent, so a node no root reaches leads,
        // following parents, into a cycle.
        let mut reached = vec![false; n];
        order.iter().for_each(|&i| reached[i] = true);
        let start = (0..n).find(|&i| !reached[i]).unwrap_or(0);
        let mut seen = vec![false; n];
        let mut node = start;
        while !seen[node] {
            seen[node] = true;
            node = parent[node].unwrap_or(node);
        }
        // `node` lies on the cycle: list it.
        let mut cycle = vec![node];
        let mut next = parent[node].unwrap_or(node);
        while next != node && cycle.len() <= n {
            cycle.push(next);
            next = parent[next].unwrap_or(node);
        }
        cycle.push(node);
        cycle.reverse();
        let path: Vec<String> = cycle.iter().map(|i| i.to_string()).collect();
        return Err(invalid!("node {node} is its own ancestor (cycle {})", path.join(" -> ")));
    }
    Ok(NodeOrder { order, parent })
}

/// The nodes a scene lists must be roots (the spec: "each root node"),
/// each listed once.
pub fn check_scene_roots(nodes: &[usize], parent: &[Option<usize>]) -> Result<(), AssetError> {
    let mut listed = std::collections::HashMap::with_capacity(nodes.len());
    for (i, &n) in nodes.iter().enumerate() {
        if let Some(Some(p)) = parent.get(n) {
            return Err(invalid!("nodes[{i}]: node {n} is not a root (its parent is node {p})"));
        }
        if let Some(first) = listed.insert(n, i) {
            return Err(invalid!("nodes[{i}]: node {n} is listed twice (also nodes[{first}])"));
        }
    }
    Ok(())
}

/// Relative size of a determinant below which a matrix counts as singular:
/// |det| against the product of the column lengths (which bounds it), so
/// the test does not depend on the model's units.
const SINGULAR_RATIO: f32 = 1e-6;

/// Whether an inverse bind matrix (column-major) cannot be inverted: all
/// zero, a zero scale, or columns so nearly dependent that its inverse
/// would be meaningless.
pub fn is_singular(matrix: &nalgebra::Matrix4<f32>) -> bool {
    let bound: f32 = matrix.column_iter().map(|c| c.norm()).product();
    let det = matrix.determinant();
    !(det.is_finite() && bound.is_finite() && det.abs() > SINGULAR_RATIO * bound && bound > 0.0)
}

/// Formats two close numbers with enough decimals (at least 2) to tell them apart.
pub fn fmt_pair(a: f32, b: f32) -> (String, String) {
    for prec in 2..=9 {
        let (sa, sb) = (format!("{a:.prec$}"), format!("{b:.prec$}"));
        if sa != sb || a == b {
            return (sa, sb);
        }
    }
    (format!("{a:?}"), format!("{b:?}"))
}

/// Key times must exist, be finite, non-negative and strictly increasing.
pub fn check_key_times(times: &[f32]) -> Result<(), AssetError> {
    if times.is_empty() {
        return Err(invalid!("no keys"));
    }
    for (k, &t) in times.iter().enumerate() {
        if !t.is_finite() {
            return Err(invalid!("key time {k} is not finite ({t})"));
        }
        if t < 0.0 {
            return Err(invalid!("key time {k} is negative ({t})"));
        }
        if k > 0 && t <= times[k - 1] {
            let (now, before) = fmt_pair(t, times[k - 1]);
            return Err(invalid!("key times not increasing at key {k} ({now} after {before})"));
        }
    }
    Ok(())
}

/// Index of the first non-finite value.
pub fn first_non_finite(values: &[f32]) -> Option<usize> {
    values.iter().position(|v| !v.is_finite())
}

/// Every component finite; the message names the element (`what i`).
pub fn check_finite<const N: usize>(what: &str, values: &[[f32; N]]) -> Result<(), AssetError> {
    match values.iter().position(|v| v.iter().any(|c| !c.is_finite())) {
        Some(i) => Err(invalid!("{what} {i} is not finite ({:?})", values[i])),
        None => Ok(()),
    }
}

/// Rotation keys must have non-zero length; with three values per key
/// (cubic spline) only the middle one is a rotation, tangents may be zero.
pub fn check_rotations(values: &[[f32; 4]], per_key: usize) -> Result<(), AssetError> {
    let per_key = per_key.max(1);
    let middle = per_key / 2;
    for (k, key) in values.chunks(per_key).enumerate() {
        if let Some(q) = key.get(middle)
            && q.iter().map(|c| c * c).sum::<f32>() <= f32::MIN_POSITIVE
        {
            return Err(invalid!("zero-length rotation at key {k}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_parents_first_roots_ascending_children_listed() {
        // 3 -> [1, 0], 2 -> [4]
        let children = vec![vec![], vec![], vec![4], vec![1, 0], vec![]];
        let o = node_order(&children).unwrap();
        assert_eq!(o.order, vec![2, 4, 3, 1, 0]);
        assert_eq!(o.parent, vec![Some(3), Some(3), None, None, Some(2)]);
    }

    #[test]
    fn rejects_bad_hierarchies() {
        assert!(node_order(&[vec![5]]).unwrap_err().to_string().contains("child 5 does not exist"));
        assert_eq!(
            node_order(&[vec![2], vec![2], vec![]]).unwrap_err().to_string(),
            "node 2 has two parents: 0 and 1"
        );
        assert!(node_order(&[vec![0]]).unwrap_err().to_string().contains("own child"));
        // 0 is a root; 1 -> 2 -> 3 -> 1 is a cycle with 4 hanging off it.
        let e = node_order(&[vec![], vec![2], vec![3, 4], vec![1], vec![]]).unwrap_err().to_string();
        assert!(e.contains("is its own ancestor"), "{e}");
        assert!(
            e.contains("1 -> 2 -> 3 -> 1")
                || e.contains("2 -> 3 -> 1 -> 2")
                || e.contains("3 -> 1 -> 2 -> 3"),
            "{e}"
        );
    }

    #[test]
    fn scene_roots() {
        let parent = [None, Some(0), None];
        assert!(check_scene_roots(&[0, 2], &parent).is_ok());
        assert_eq!(
            check_scene_roots(&[0, 1], &parent).unwrap_err().to_string(),
            "nodes[1]: node 1 is not a root (its parent is node 0)"
        );
        assert_eq!(
            check_scene_roots(&[2, 0, 2], &parent).unwrap_err().to_string(),
            "nodes[2]: node 2 is listed twice (also nodes[0])"
        );
    }

    #[test]
    fn singular_matrices() {
        let is_singular = |m: &[f32; 16]| is_singular(&nalgebra::Matrix4::from_column_slice(m));
        let mut m = [0.0f32; 16];
        assert!(is_singular(&m));
        for i in [0, 5, 10, 15] {
            m[i] = 1.0;
        }
        assert!(!is_singular(&m));
        // Centimetre rigs: a scale of 0.01 is not singular.
        let mut small = m;
        for i in [0, 5, 10] {
            small[i] = 0.01;
        }
        assert!(!is_singular(&small));
        let mut flat = m;
        flat[10] = 0.0;
        assert!(is_singular(&flat));
        // Two equal columns.
        let mut dependent = m;
        dependent[4..8].copy_from_slice(&[1.0, 0.0, 0.0, 0.0]);
        assert!(is_singular(&dependent));
        m[3] = f32::NAN;
        assert!(is_singular(&m));
    }

    #[test]
    fn key_times() {
        assert!(check_key_times(&[0.0, 0.5, 1.0]).is_ok());
        assert_eq!(
            check_key_times(&[0.0, 0.52, 0.5]).unwrap_err().to_string(),
            "key times not increasing at key 2 (0.50 after 0.52)"
        );
        assert_eq!(
            check_key_times(&[0.0, 0.5, 0.5]).unwrap_err().to_string(),
            "key times not increasing at key 2 (0.50 after 0.50)"
        );
        assert_eq!(
            check_key_times(&[0.0, 0.501, 0.5]).unwrap_err().to_string(),
            "key times not increasing at key 2 (0.500 after 0.501)"
        );
        assert!(
            check_key_times(&[0.0, f32::NAN]).unwrap_err().to_string().contains("key time 1 is not finite")
        );
        assert!(check_key_times(&[-0.1, 0.0]).unwrap_err().to_string().contains("negative"));
        assert_eq!(check_key_times(&[]).unwrap_err().to_string(), "no keys");
    }

    #[test]
    fn finite_and_rotations() {
        assert!(check_finite("vertex", &[[0.0, 1.0, 2.0]]).is_ok());
        assert!(
            check_finite("vertex", &[[0.0; 3], [0.0, f32::INFINITY, 0.0]])
                .unwrap_err()
                .to_string()
                .starts_with("vertex 1")
        );
        assert_eq!(first_non_finite(&[1.0, f32::NAN]), Some(1));
        assert!(check_rotations(&[[0.0, 0.0, 0.0, 2.0]], 1).is_ok());
        assert_eq!(
            check_rotations(&[[0.0, 0.0, 0.0, 1.0], [0.0; 4]], 1).unwrap_err().to_string(),
            "zero-length rotation at key 1"
        );
        // Cubic: zero tangents are fine, a zero value is not.
        assert!(check_rotations(&[[0.0; 4], [0.0, 0.0, 0.0, 1.0], [0.0; 4]], 3).is_ok());
        assert!(check_rotations(&[[0.0, 0.0, 0.0, 1.0], [0.0; 4], [0.0, 0.0, 0.0, 1.0]], 3).is_err());
    }
}
