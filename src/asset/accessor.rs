//! A bounds-checked accessor reader: every offset, stride and count read from
//! the file is checked before a byte is touched (gltf's own reader trusts
//! them and may panic).
//!
//! It never trusts a count, offset or stride from the file, and never
//! allocates before charging the budget.
//!
//! Errors start with `accessor N`; callers prefix what the accessor was
//! used as. Every read is charged to the file's memory budget before its
//! data is allocated: a view-less accessor (all zeros, so backed by no data)
//! or one read many times cannot make a small file take gigabytes.

use super::error::{AssetError, invalid};
use super::limits::Budget;
use crate::text::human_bytes;
use gltf::json::{
    self,
    accessor::{ComponentType, Type},
    validation::Checked,
};

/// Bytes (as f32) a view-less accessor may always declare.
const VIEWLESS_FLOOR: u64 = 1 << 20;

/// Bytes a view-less accessor may declare per byte of buffer data.
const VIEWLESS_PER_DATA_BYTE: u64 = 4;

/// Bytes charged per component read: the f64 read buffer plus the f32
/// (or u32) result made from it.
const BYTES_PER_COMPONENT: u64 = 12;

/// Reads accessors of one file.
#[derive(Clone, Copy)]
pub struct Reader<'a> {
    root: &'a json::Root,
    buffers: &'a [Vec<u8>],
    budget: &'a Budget,
}

/// The glTF name of a component type.
fn component_name(c: ComponentType) -> &'static str {
    match c {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

fn component_size(c: ComponentType) -> usize {
    match c {
        ComponentType::I8 | ComponentType::U8 => 1,
        ComponentType::I16 | ComponentType::U16 => 2,
        ComponentType::U32 | ComponentType::F32 => 4,
    }
}

/// The glTF name of an accessor type.
fn type_name(t: Type) -> &'static str {
    match t {
        Type::Scalar => "SCALAR",
        Type::Vec2 => "VEC2",
        Type::Vec3 => "VEC3",
        Type::Vec4 => "VEC4",
        Type::Mat2 => "MAT2",
        Type::Mat3 => "MAT3",
        Type::Mat4 => "MAT4",
    }
}

/// Byte layout of one element: `columns` columns of `rows` components, each
/// column starting at a multiple of `column_stride` (matrix columns are
/// padded to 4 bytes).
#[derive(Debug, Clone, Copy)]
struct Layout {
    component: ComponentType,
    rows: usize,
    columns: usize,
    column_stride: usize,
}

impl Layout {
    fn new(component: ComponentType, ty: Type) -> Self {
        let cs = component_size(component);
        let (rows, columns) = match ty {
            Type::Scalar => (1, 1),
            Type::Vec2 => (2, 1),
            Type::Vec3 => (3, 1),
            Type::Vec4 => (4, 1),
            Type::Mat2 => (2, 2),
            Type::Mat3 => (3, 3),
            Type::Mat4 => (4, 4),
        };
        let column_stride = if columns > 1 { (rows * cs).next_multiple_of(4) } else { rows * cs };
        Layout { component, rows, columns, column_stride }
    }
    fn components(&self) -> usize {
        self.rows * self.columns
    }
    fn size(&self) -> usize {
        self.columns * self.column_stride
    }
}

/// One component, raw (not normalised). f64 holds every component type exactly.
fn component(bytes: &[u8], c: ComponentType) -> f64 {
    match c {
        ComponentType::I8 => bytes[0] as i8 as f64,
        ComponentType::U8 => bytes[0] as f64,
        ComponentType::I16 => i16::from_le_bytes([bytes[0], bytes[1]]) as f64,
        ComponentType::U16 => u16::from_le_bytes([bytes[0], bytes[1]]) as f64,
        ComponentType::U32 => u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f64,
        ComponentType::F32 => f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f64,
    }
}

/// Maps a normalised integer to a float as the glTF spec says.
pub fn normalize(value: f64, c: ComponentType) -> f32 {
    match c {
        ComponentType::I8 => (value / 127.0).max(-1.0) as f32,
        ComponentType::U8 => (value / 255.0) as f32,
        ComponentType::I16 => (value / 32767.0).max(-1.0) as f32,
        ComponentType::U16 => (value / 65535.0) as f32,
        ComponentType::U32 => (value / 4294967295.0) as f32,
        ComponentType::F32 => value as f32,
    }
}

/// Raw components of an accessor plus how to interpret them.
struct Raw {
    values: Vec<f64>,
    component: ComponentType,
    normalized: bool,
    ty: Type,
}

impl<'a> Reader<'a> {
    /// A reader over a validated document and its buffers (each cut to its
    /// byteLength), charging what it reads to `budget`.
    pub fn new(root: &'a json::Root, buffers: &'a [Vec<u8>], budget: &'a Budget) -> Self {
        Reader { root, buffers, budget }
    }

    /// Charges `count` elements of `layout` read for accessor `index`.
    fn charge(
        &self,
        index: usize,
        what: &str,
        count: usize,
        layout: Layout,
        ty: Type,
    ) -> Result<(), AssetError> {
        let bytes = (count as u64).saturating_mul(layout.components() as u64 * BYTES_PER_COMPONENT);
        self.budget.charge(bytes, || {
            format!(
                "accessor {index} {what}({} {} x {count})",
                type_name(ty),
                component_name(layout.component)
            )
        })
    }

    fn accessor(&self, index: usize) -> Result<&'a json::Accessor, AssetError> {
        self.root.accessors.get(index).ok_or_else(|| {
            invalid!("accessor {index} does not exist ({} accessors)", self.root.accessors.len())
        })
    }

    /// The bytes of bufferView `view`, checked to lie inside its buffer.
    fn view_bytes(&self, view: usize) -> Result<(&'a [u8], Option<usize>), AssetError> {
        let v = self.root.buffer_views.get(view).ok_or_else(|| {
            invalid!("bufferView {view} does not exist ({} bufferViews)", self.root.buffer_views.len())
        })?;
        let b = v.buffer.value();
        let buffer =
            self.buffers.get(b).ok_or_else(|| invalid!("bufferView {view}: buffer {b} does not exist"))?;
        let start = v.byte_offset.map_or(0, |o| o.0);
        let end = start.checked_add(v.byte_length.0);
        match end {
            Some(end) if end <= buffer.len() as u64 => {
                Ok((&buffer[start as usize..end as usize], v.byte_stride.map(|s| s.0)))
            }
            _ => Err(invalid!(
                "bufferView {view}: bytes {start}..{} lie outside buffer {b}, which has {}",
                end.map_or_else(|| "overflow".to_string(), |e| e.to_string()),
                buffer.len()
            )),
        }
    }

    /// Reads `count` elements of `layout` from `bytes` at `offset` with
    /// `stride`, charging them once they are known to lie in the view.
    #[allow(clippy::too_many_arguments)]
    fn read_elements(
        &self,
        index: usize,
        what: &str,
        view: usize,
        bytes: &[u8],
        offset: u64,
        stride: usize,
        count: usize,
        layout: Layout,
        ty: Type,
        out: &mut Vec<f64>,
    ) -> Result<(), AssetError> {
        if count == 0 {
            return Ok(());
        }
        let size = layout.size();
        let end = (count as u64 - 1)
            .checked_mul(stride as u64)
            .and_then(|v| v.checked_add(size as u64))
            .and_then(|v| v.checked_add(offset));
        match end {
            Some(end) if end <= bytes.len() as u64 => {}
            _ => {
                return Err(invalid!(
                    "accessor {index}: {what}reads bytes {offset}..{} of bufferView {view}, which has {}",
                    end.map_or_else(|| "overflow".to_string(), |e| e.to_string()),
                    bytes.len()
                ));
            }
        }
        self.charge(index, what, count, layout, ty)?;
        let cs = component_size(layout.component);
        out.reserve(count * layout.components());
        for e in 0..count {
            let base = offset as usize + e * stride;
            for c in 0..layout.columns {
                for r in 0..layout.rows {
                    let at = base + c * layout.column_stride + r * cs;
                    out.push(component(&bytes[at..at + cs], layout.component));
                }
            }
        }
        Ok(())
    }

    fn read_raw(&self, index: usize) -> Result<Raw, AssetError> {
        let a = self.accessor(index)?;
        let (Checked::Valid(component), Checked::Valid(ty)) = (a.component_type, a.type_) else {
            return Err(invalid!("accessor {index}: invalid componentType or type"));
        };
        let component = component.0;
        let layout = Layout::new(component, ty);
        let count = usize::try_from(a.count.0).map_err(|_| invalid!("accessor {index}: count too large"))?;
        let mut values = Vec::new();
        match a.buffer_view {
            Some(view) => {
                let (bytes, stride) = self.view_bytes(view.value())?;
                // Older exporters write byteStride on animation and index views too; honour it everywhere.
                let stride = stride.unwrap_or(layout.size());
                if stride < layout.size() {
                    return Err(invalid!(
                        "accessor {index}: bufferView {} byteStride {stride} is smaller than one {} {} element ({} bytes)",
                        view.value(),
                        type_name(ty),
                        component_name(component),
                        layout.size()
                    ));
                }
                let offset = a.byte_offset.map_or(0, |o| o.0);
                // The spec requires components aligned to their size (three.js
                // fails on such files too); say so rather than guess.
                let view_offset =
                    self.root.buffer_views.get(view.value()).and_then(|v| v.byte_offset).map_or(0, |o| o.0);
                let start = view_offset.saturating_add(offset);
                let cs = component_size(component) as u64;
                if start % cs != 0 {
                    return Err(invalid!(
                        "accessor {index}: starts at byte {start} of its buffer, not a multiple of its {cs}-byte components"
                    ));
                }
                self.read_elements(
                    index,
                    "",
                    view.value(),
                    bytes,
                    offset,
                    stride,
                    count,
                    layout,
                    ty,
                    &mut values,
                )?;
            }
            None => {
                // All zeros, backed by no data: bounded by the data that uses
                // it (a view-less morph target matches a backed POSITION).
                let bytes = (count as u64).saturating_mul(layout.components() as u64 * 4);
                let data: u64 = self.buffers.iter().map(|b| b.len() as u64).sum();
                let limit = VIEWLESS_FLOOR.saturating_add(data.saturating_mul(VIEWLESS_PER_DATA_BYTE));
                if bytes > limit {
                    return Err(invalid!(
                        "accessor {index} ({} {} x {count}, no bufferView): {bytes} bytes of zeros, more than the file's data can use ({limit} bytes: {} + {VIEWLESS_PER_DATA_BYTE} x its {data} buffer bytes)",
                        type_name(ty),
                        component_name(component),
                        human_bytes(VIEWLESS_FLOOR),
                    ));
                }
                self.charge(index, "", count, layout, ty)?;
                values = vec![0.0; count * layout.components()];
            }
        }
        if let Some(sparse) = &a.sparse {
            self.apply_sparse(index, sparse, count, layout, ty, &mut values)?;
        }
        Ok(Raw { values, component, normalized: a.normalized, ty })
    }

    fn apply_sparse(
        &self,
        index: usize,
        sparse: &json::accessor::sparse::Sparse,
        count: usize,
        layout: Layout,
        ty: Type,
        values: &mut [f64],
    ) -> Result<(), AssetError> {
        let n = usize::try_from(sparse.count.0).ok().filter(|&n| n <= count).ok_or_else(|| {
            invalid!("accessor {index}: sparse count {} is larger than count {count}", sparse.count.0)
        })?;
        let Checked::Valid(ic) = sparse.indices.component_type else {
            return Err(invalid!("accessor {index}: invalid sparse index componentType"));
        };
        let ic = ic.0;
        if !matches!(ic, ComponentType::U8 | ComponentType::U16 | ComponentType::U32) {
            return Err(invalid!("accessor {index}: sparse indices are {}", component_name(ic)));
        }
        let iv = sparse.indices.buffer_view.value();
        let (ibytes, _) = self.view_bytes(iv)?;
        let mut indices = Vec::new();
        let ilayout = Layout::new(ic, Type::Scalar);
        let isize = ilayout.size();
        self.read_elements(
            index,
            "sparse indices ",
            iv,
            ibytes,
            sparse.indices.byte_offset.0,
            isize,
            n,
            ilayout,
            Type::Scalar,
            &mut indices,
        )?;
        let vv = sparse.values.buffer_view.value();
        let (vbytes, _) = self.view_bytes(vv)?;
        let mut sv = Vec::new();
        let size = layout.size();
        self.read_elements(
            index,
            "sparse values ",
            vv,
            vbytes,
            sparse.values.byte_offset.0,
            size,
            n,
            layout,
            ty,
            &mut sv,
        )?;
        let k = layout.components();
        for (s, &i) in indices.iter().enumerate() {
            let i = i as usize;
            if i >= count {
                return Err(invalid!("accessor {index}: sparse index {s} is {i}, but count is {count}"));
            }
            // The spec wants them strictly increasing (no repeats, no order to guess).
            if s > 0 && i <= indices[s - 1] as usize {
                return Err(invalid!(
                    "accessor {index}: sparse index {s} is {i}, not above index {} ({}): sparse indices must increase",
                    s - 1,
                    indices[s - 1]
                ));
            }
            values[i * k..(i + 1) * k].copy_from_slice(&sv[s * k..(s + 1) * k]);
        }
        Ok(())
    }

    fn check_type(index: usize, raw: &Raw, expected: &[Type]) -> Result<(), AssetError> {
        if expected.contains(&raw.ty) {
            return Ok(());
        }
        let names: Vec<&str> = expected.iter().map(|t| type_name(*t)).collect();
        Err(invalid!("accessor {index}: type {}, expected {}", type_name(raw.ty), names.join(" or ")))
    }

    /// Reads an accessor of type `ty` as floats (normalised integers mapped to
    /// [0, 1] or [-1, 1], plain integers converted as they are); `UNSIGNED_INT`
    /// is not a float format and is refused.
    pub fn read_f32(&self, index: usize, ty: Type) -> Result<Vec<f32>, AssetError> {
        let raw = self.read_raw(index)?;
        Self::check_type(index, &raw, &[ty])?;
        if raw.component == ComponentType::U32 {
            return Err(invalid!("accessor {index}: component type UNSIGNED_INT cannot hold float data"));
        }
        let c = raw.component;
        Ok(if raw.normalized {
            raw.values.iter().map(|&v| normalize(v, c)).collect()
        } else {
            raw.values.iter().map(|&v| v as f32).collect()
        })
    }

    /// Reads an integer accessor of type `ty` whose component type is one of `allowed`.
    fn read_uint(&self, index: usize, ty: Type, allowed: &[ComponentType]) -> Result<Vec<u32>, AssetError> {
        let raw = self.read_raw(index)?;
        Self::check_type(index, &raw, &[ty])?;
        if !allowed.contains(&raw.component) || raw.normalized {
            let names: Vec<&str> = allowed.iter().map(|c| component_name(*c)).collect();
            return Err(invalid!(
                "accessor {index}: component type {}{}, expected {}",
                if raw.normalized { "normalized " } else { "" },
                component_name(raw.component),
                names.join(" or ")
            ));
        }
        Ok(raw.values.iter().map(|&v| v as u32).collect())
    }

    /// Reads a SCALAR accessor as floats.
    pub fn read_scalar_f32(&self, index: usize) -> Result<Vec<f32>, AssetError> {
        self.read_f32(index, Type::Scalar)
    }

    /// Reads a VEC2 accessor.
    pub fn read_vec2(&self, index: usize) -> Result<Vec<[f32; 2]>, AssetError> {
        Ok(self.read_f32(index, Type::Vec2)?.chunks_exact(2).map(|c| [c[0], c[1]]).collect())
    }

    /// Reads a VEC3 accessor.
    pub fn read_vec3(&self, index: usize) -> Result<Vec<[f32; 3]>, AssetError> {
        Ok(self.read_f32(index, Type::Vec3)?.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect())
    }

    /// Reads a VEC4 accessor.
    pub fn read_vec4(&self, index: usize) -> Result<Vec<[f32; 4]>, AssetError> {
        Ok(self.read_f32(index, Type::Vec4)?.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect())
    }

    /// Reads a MAT4 accessor; each matrix is 16 floats in column-major order.
    pub fn read_mat4(&self, index: usize) -> Result<Vec<[f32; 16]>, AssetError> {
        Ok(self
            .read_f32(index, Type::Mat4)?
            .chunks_exact(16)
            .map(|c| {
                let mut m = [0.0; 16];
                m.copy_from_slice(c);
                m
            })
            .collect())
    }

    /// Reads a SCALAR index accessor (UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT).
    pub fn read_indices(&self, index: usize) -> Result<Vec<u32>, AssetError> {
        self.read_uint(index, Type::Scalar, &[ComponentType::U8, ComponentType::U16, ComponentType::U32])
    }

    /// Reads a VEC4 joint-index accessor (UNSIGNED_BYTE or UNSIGNED_SHORT).
    pub fn read_joints(&self, index: usize) -> Result<Vec<[u16; 4]>, AssetError> {
        let v = self.read_uint(index, Type::Vec4, &[ComponentType::U8, ComponentType::U16])?;
        Ok(v.chunks_exact(4).map(|c| [c[0] as u16, c[1] as u16, c[2] as u16, c[3] as u16]).collect())
    }

    /// Number of elements an accessor declares.
    pub fn count(&self, index: usize) -> Result<u64, AssetError> {
        Ok(self.accessor(index)?.count.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn root(value: serde_json::Value) -> json::Root {
        serde_json::from_value(value).unwrap()
    }

    fn bytes_f32(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|f| f.to_le_bytes()).collect()
    }

    #[test]
    fn strided_vec3_with_offsets() {
        // Two interleaved VEC3 floats with a 4-byte gap (stride 16), view at byte 4, accessor at 0.
        let mut buf = vec![0u8; 4];
        buf.extend(bytes_f32(&[1.0, 2.0, 3.0, 99.0, 4.0, 5.0, 6.0, 99.0]));
        let r = root(json!({
            "asset": {"version": "2.0"},
            "buffers": [{"byteLength": 36}],
            "bufferViews": [{"buffer": 0, "byteOffset": 4, "byteLength": 28, "byteStride": 16}],
            "accessors": [{"bufferView": 0, "componentType": 5126, "count": 2, "type": "VEC3"}]
        }));
        let buffers = vec![buf];
        let budget = Budget::unlimited();
        let reader = Reader::new(&r, &buffers, &budget);
        assert_eq!(reader.read_vec3(0).unwrap(), vec![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        assert!(reader.read_vec4(0).unwrap_err().to_string().contains("type VEC3, expected VEC4"));
    }

    #[test]
    fn out_of_view_read_is_an_error() {
        let r = root(json!({
            "asset": {"version": "2.0"},
            "buffers": [{"byteLength": 24}],
            "bufferViews": [{"buffer": 0, "byteLength": 24}],
            "accessors": [{"bufferView": 0, "byteOffset": 4, "componentType": 5126, "count": 2, "type": "VEC3"}]
        }));
        let buffers = vec![vec![0u8; 24]];
        let e = Reader::new(&r, &buffers, &Budget::unlimited()).read_vec3(0).unwrap_err();
        assert_eq!(e.to_string(), "accessor 0: reads bytes 4..28 of bufferView 0, which has 24");
    }

    #[test]
    fn huge_count_does_not_overflow() {
        let r = root(json!({
            "asset": {"version": "2.0"},
            "buffers": [{"byteLength": 24}],
            "bufferViews": [{"buffer": 0, "byteLength": 24, "byteStride": 252}],
            "accessors": [{"bufferView": 0, "componentType": 5126, "count": 18446744073709551615u64, "type": "VEC3"}]
        }));
        let buffers = vec![vec![0u8; 24]];
        assert!(Reader::new(&r, &buffers, &Budget::unlimited()).read_vec3(0).is_err());
    }

    #[test]
    fn normalized_integers() {
        let r = root(json!({
            "asset": {"version": "2.0"},
            "buffers": [{"byteLength": 12}],
            "bufferViews": [{"buffer": 0, "byteLength": 12}],
            "accessors": [
                {"bufferView": 0, "componentType": 5120, "normalized": true, "count": 1, "type": "VEC4"},
                {"bufferView": 0, "componentType": 5121, "normalized": true, "count": 1, "type": "VEC4"},
                {"bufferView": 0, "byteOffset": 4, "componentType": 5122, "normalized": true, "count": 1, "type": "VEC4"},
                {"bufferView": 0, "byteOffset": 4, "componentType": 5123, "normalized": true, "count": 1, "type": "VEC4"},
                {"bufferView": 0, "byteOffset": 4, "componentType": 5123, "count": 1, "type": "VEC4"}
            ]
        }));
        let mut buf = vec![0x80u8, 0x7f, 0xff, 0x00];
        for v in [i16::MIN, i16::MAX, -1, 0] {
            buf.extend(v.to_le_bytes());
        }
        let buffers = vec![buf];
        let budget = Budget::unlimited();
        let rd = Reader::new(&r, &buffers, &budget);
        assert_eq!(rd.read_vec4(0).unwrap(), vec![[-1.0, 1.0, -1.0 / 127.0, 0.0]]);
        assert_eq!(rd.read_vec4(1).unwrap(), vec![[128.0 / 255.0, 127.0 / 255.0, 1.0, 0.0]]);
        assert_eq!(rd.read_vec4(2).unwrap(), vec![[-1.0, 1.0, -1.0 / 32767.0, 0.0]]);
        assert_eq!(rd.read_vec4(3).unwrap()[0][1], 32767.0 / 65535.0);
        assert_eq!(rd.read_joints(4).unwrap(), vec![[32768, 32767, 65535, 0]]);
        assert!(rd.read_joints(3).unwrap_err().to_string().contains("normalized"));
    }

    #[test]
    fn sparse_with_and_without_base_view() {
        let mut buf = bytes_f32(&[1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0]);
        buf.extend([2u8, 0, 0, 0]); // sparse indices (u8, padded)
        buf.extend(bytes_f32(&[9.0, 8.0, 7.0]));
        let r = root(json!({
            "asset": {"version": "2.0"},
            "buffers": [{"byteLength": 52}],
            "bufferViews": [
                {"buffer": 0, "byteLength": 36},
                {"buffer": 0, "byteOffset": 36, "byteLength": 4},
                {"buffer": 0, "byteOffset": 40, "byteLength": 12}
            ],
            "accessors": [
                {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                 "sparse": {"count": 1, "indices": {"bufferView": 1, "componentType": 5121},
                            "values": {"bufferView": 2}}},
                {"componentType": 5126, "count": 3, "type": "VEC3",
                 "sparse": {"count": 1, "indices": {"bufferView": 1, "componentType": 5121},
                            "values": {"bufferView": 2}}},
                {"componentType": 5126, "count": 2, "type": "VEC3",
                 "sparse": {"count": 1, "indices": {"bufferView": 1, "componentType": 5121},
                            "values": {"bufferView": 2}}}
            ]
        }));
        let buffers = vec![buf];
        let budget = Budget::unlimited();
        let rd = Reader::new(&r, &buffers, &budget);
        assert_eq!(rd.read_vec3(0).unwrap(), vec![[1.0; 3], [2.0; 3], [9.0, 8.0, 7.0]]);
        assert_eq!(rd.read_vec3(1).unwrap(), vec![[0.0; 3], [0.0; 3], [9.0, 8.0, 7.0]]);
        assert!(rd.read_vec3(2).unwrap_err().to_string().contains("sparse index 0 is 2, but count is 2"));
    }

    #[test]
    fn mat2_of_bytes_has_padded_columns() {
        let r = root(json!({
            "asset": {"version": "2.0"},
            "buffers": [{"byteLength": 8}],
            "bufferViews": [{"buffer": 0, "byteLength": 8}],
            "accessors": [{"bufferView": 0, "componentType": 5121, "count": 1, "type": "MAT2"}]
        }));
        let buffers = vec![vec![1, 2, 0, 0, 3, 4, 0, 0]];
        assert_eq!(
            Reader::new(&r, &buffers, &Budget::unlimited()).read_f32(0, Type::Mat2).unwrap(),
            vec![1.0, 2.0, 3.0, 4.0]
        );
    }
}
