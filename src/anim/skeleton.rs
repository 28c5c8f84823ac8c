//! The joint hierarchy and the skins that bind meshes to it.
//!
//! Immutable once built (parents before children, finite rest transforms,
//! checked): nothing here poses or animates it.

use super::job::JobError;
use super::transform::Transform;
use crate::text::display_name;
use nalgebra::Matrix4;

/// Parent index of a root joint.
pub const NO_PARENT: u32 = u32::MAX;

/// A joint hierarchy stored parent-before-child: `parents[j] < j` for every
/// non-root joint, so one forward pass computes model-space transforms.
///
/// A "joint" here is any node of the character's scene graph, not only the
/// joints some skin uses: animated non-joint nodes and rigid meshes parented
/// to joints need their transforms too.
#[derive(Debug, Clone, PartialEq)]
pub struct Skeleton {
    names: Vec<String>,
    parents: Vec<u32>,
    rest: Vec<Transform>,
}

impl Skeleton {
    /// Builds a skeleton, checking that parents come before children and that
    /// every rest transform is finite.
    pub fn new(names: Vec<String>, parents: Vec<u32>, rest: Vec<Transform>) -> Result<Self, JobError> {
        if names.len() != parents.len() || names.len() != rest.len() {
            return Err(JobError::new(format!(
                "skeleton: {} names, {} parents, {} rest transforms",
                names.len(),
                parents.len(),
                rest.len()
            )));
        }
        if names.len() >= NO_PARENT as usize {
            return Err(JobError::new("skeleton: too many joints"));
        }
        for (j, &p) in parents.iter().enumerate() {
            if p != NO_PARENT && p as usize >= j {
                return Err(JobError::new(format!(
                    "skeleton: joint {j} \"{}\" has parent {p}, which does not come before it",
                    display_name(&names[j])
                )));
            }
            if !rest[j].is_finite() {
                return Err(JobError::new(format!(
                    "skeleton: joint {j} \"{}\" has a non-finite rest transform",
                    display_name(&names[j])
                )));
            }
        }
        Ok(Skeleton { names, parents, rest })
    }

    /// Number of joints.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// True for a skeleton without joints.
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    /// Joint names (may be empty strings).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Parent of each joint, `NO_PARENT` for roots; always less than the child.
    pub fn parents(&self) -> &[u32] {
        &self.parents
    }

    /// Rest (bind-local) transform of each joint, used where a clip has no track.
    pub fn rest(&self) -> &[Transform] {
        &self.rest
    }

    /// Index of the first joint with this name.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
}

/// Binds mesh vertices to skeleton joints: vertex joint index `i` refers to
/// skeleton joint `joints[i]`, whose skinning matrix is
/// `model[joints[i]] * inverse_binds[i]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Skin {
    /// Name, possibly empty.
    pub name: String,
    /// Skeleton joint of each skin joint.
    pub joints: Vec<u32>,
    /// Inverse bind matrix of each skin joint (column vectors).
    pub inverse_binds: Vec<Matrix4<f32>>,
}

/// One skinning matrix as the GPU reads it: `struct BoneMatrix { row_major
/// mat4 skin; }`, 64-byte stride, applied as `vec4(p, 1) * skin`.
///
/// The 16 floats are the column-vector matrix in nalgebra's column-major
/// order, which is exactly the row-major layout of the row-vector matrix the
/// shader uses: upload with `bytemuck::cast_slice`, never transpose.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct BoneMatrix {
    /// Column-major column-vector matrix == row-major row-vector matrix.
    pub skin: [f32; 16],
}

const _: () = assert!(std::mem::size_of::<BoneMatrix>() == 64);

impl BoneMatrix {
    /// The identity palette entry.
    pub const IDENTITY: BoneMatrix =
        BoneMatrix { skin: [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0] };

    /// Stores a column-vector matrix without transposing it.
    pub fn from_matrix(m: &Matrix4<f32>) -> Self {
        let mut skin = [0.0; 16];
        skin.copy_from_slice(m.as_slice());
        BoneMatrix { skin }
    }

    /// The column-vector matrix back.
    pub fn to_matrix(&self) -> Matrix4<f32> {
        Matrix4::from_column_slice(&self.skin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_child_before_parent() {
        let e = Skeleton::new(vec!["a".into(), "b".into()], vec![1, NO_PARENT], vec![Transform::IDENTITY; 2])
            .unwrap_err();
        assert!(e.0.contains("joint 0"), "{e}");
    }

    /// Found by the importer fuzz run (20 M executions in): a joint named
    /// with a newline and an escape sequence and a non-finite rest pose.
    #[test]
    fn names_in_messages_are_escaped() {
        let mut rest = Transform::IDENTITY;
        rest.translation.x = f32::NAN;
        let e = Skeleton::new(vec!["name\n\u{1b}[2J".into()], vec![NO_PARENT], vec![rest]).unwrap_err();
        assert_eq!(e.to_string(), "skeleton: joint 0 \"name\\n\\u{1b}[2J\" has a non-finite rest transform");
        let e =
            Skeleton::new(vec!["a".into(), "b\n".into()], vec![NO_PARENT, 1], vec![Transform::IDENTITY; 2])
                .unwrap_err();
        assert!(!e.to_string().contains('\n'), "{e}");
    }

    #[test]
    fn bone_matrix_is_column_major_without_transpose() {
        #[rustfmt::skip]
        let m = Matrix4::new(
            1.0, 2.0, 3.0, 4.0,
            5.0, 6.0, 7.0, 8.0,
            9.0, 10.0, 11.0, 12.0,
            0.0, 0.0, 0.0, 1.0,
        );
        let b = BoneMatrix::from_matrix(&m);
        // Translation (4, 8, 12) lands in floats 12..15: row 3 of the row-major row-vector matrix.
        assert_eq!(&b.skin[12..16], &[4.0, 8.0, 12.0, 1.0]);
        assert_eq!(&b.skin[0..4], &[1.0, 5.0, 9.0, 0.0]);
        assert_eq!(b.to_matrix(), m);
    }
}
