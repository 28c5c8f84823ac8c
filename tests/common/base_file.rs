//! The minimal valid skinned glTF file the malformed-input tests break:
//! a triangle bound to two joints with one clip, written as .gltf (buffer
//! in a data URI) or .glb.

use base64::Engine;
use serde_json::{Value, json};
use vkskin::asset::glb_writer::glb_container;
use vkskin::asset::import::load_from_bytes;
use vkskin::asset::{ImportError, Model};

// Byte layout of the base file's buffer.
pub const POSITIONS: usize = 0; // 3 x VEC3 f32
pub const JOINTS: usize = 36; // 3 x VEC4 u16
pub const WEIGHTS: usize = 60; // 3 x VEC4 f32
pub const INDICES: usize = 108; // 3 x u16 (+2 padding)
pub const IBM: usize = 116; // 2 x MAT4 f32
pub const TIMES: usize = 244; // 3 x f32
pub const ROTATIONS: usize = 256; // 3 x VEC4 f32
pub const BUFFER_LEN: usize = 304;

/// A minimal valid skinned file: a triangle bound to two joints, one clip
/// "Wave" with three rotation keys on joint node 2.
pub struct Base {
    /// The glTF JSON (the buffer's uri is added when written).
    pub json: Value,
    /// The one buffer's bytes.
    pub buf: Vec<u8>,
}

impl Default for Base {
    fn default() -> Self {
        Self::new()
    }
}

impl Base {
    /// The valid base file.
    pub fn new() -> Self {
        let mut buf = vec![0u8; BUFFER_LEN];
        let mut b = Base { json: Value::Null, buf: Vec::new() };
        let put = |buf: &mut Vec<u8>, at: usize, v: &[f32]| {
            for (i, f) in v.iter().enumerate() {
                buf[at + 4 * i..at + 4 * i + 4].copy_from_slice(&f.to_le_bytes());
            }
        };
        put(&mut buf, POSITIONS, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
        for (i, j) in [0u16, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0].iter().enumerate() {
            buf[JOINTS + 2 * i..JOINTS + 2 * i + 2].copy_from_slice(&j.to_le_bytes());
        }
        put(&mut buf, WEIGHTS, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0]);
        for (i, ix) in [0u16, 1, 2].iter().enumerate() {
            buf[INDICES + 2 * i..INDICES + 2 * i + 2].copy_from_slice(&ix.to_le_bytes());
        }
        let identity = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        put(&mut buf, IBM, &identity);
        let mut second = identity;
        second[13] = -1.0;
        put(&mut buf, IBM + 64, &second);
        put(&mut buf, TIMES, &[0.0, 0.5, 1.0]);
        put(&mut buf, ROTATIONS, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.3826834, 0.9238795, 0.0, 0.0, 0.0, 1.0]);
        b.buf = buf;
        b.json = json!({
            "asset": {"version": "2.0"},
            "scene": 0,
            "scenes": [{"nodes": [0, 1]}],
            "nodes": [
                {"name": "body", "mesh": 0, "skin": 0},
                {"name": "root", "children": [2]},
                {"name": "arm", "translation": [0.0, 1.0, 0.0]}
            ],
            "meshes": [{"name": "tri", "primitives": [{
                "attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2},
                "indices": 3
            }]}],
            "skins": [{"joints": [1, 2], "inverseBindMatrices": 4}],
            "animations": [{"name": "Wave",
                "channels": [{"sampler": 0, "target": {"node": 2, "path": "rotation"}}],
                "samplers": [{"input": 5, "output": 6}]}],
            "buffers": [{"byteLength": BUFFER_LEN}],
            "bufferViews": [
                {"buffer": 0, "byteOffset": POSITIONS, "byteLength": 36},
                {"buffer": 0, "byteOffset": JOINTS, "byteLength": 24},
                {"buffer": 0, "byteOffset": WEIGHTS, "byteLength": 48},
                {"buffer": 0, "byteOffset": INDICES, "byteLength": 6},
                {"buffer": 0, "byteOffset": IBM, "byteLength": 128},
                {"buffer": 0, "byteOffset": TIMES, "byteLength": 12},
                {"buffer": 0, "byteOffset": ROTATIONS, "byteLength": 48}
            ],
            "accessors": [
                {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                 "min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 0.0]},
                {"bufferView": 1, "componentType": 5123, "count": 3, "type": "VEC4"},
                {"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4"},
                {"bufferView": 3, "componentType": 5123, "count": 3, "type": "SCALAR"},
                {"bufferView": 4, "componentType": 5126, "count": 2, "type": "MAT4"},
                {"bufferView": 5, "componentType": 5126, "count": 3, "type": "SCALAR", "min": [0.0], "max": [1.0]},
                {"bufferView": 6, "componentType": 5126, "count": 3, "type": "VEC4"}
            ]
        });
        b
    }

    /// Writes floats into the buffer at byte `at`.
    pub fn put_f32(&mut self, at: usize, v: &[f32]) {
        for (i, f) in v.iter().enumerate() {
            self.buf[at + 4 * i..at + 4 * i + 4].copy_from_slice(&f.to_le_bytes());
        }
    }

    /// The .gltf text with the buffer embedded as a data URI.
    pub fn gltf(&self) -> Vec<u8> {
        let mut json = self.json.clone();
        let data = base64::engine::general_purpose::STANDARD.encode(&self.buf);
        json["buffers"][0]["uri"] = Value::String(format!("data:application/octet-stream;base64,{data}"));
        serde_json::to_vec_pretty(&json).unwrap()
    }

    /// The same as a GLB with a BIN chunk.
    pub fn glb(&self) -> Vec<u8> {
        glb_container(&serde_json::to_vec(&self.json).unwrap(), Some(&self.buf))
    }

    /// Imports the .gltf form from memory as `t.gltf`.
    pub fn load(&self) -> Result<Model, ImportError> {
        load_from_bytes("t.gltf", &self.gltf(), None)
    }
}
