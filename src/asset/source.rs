//! Reading a glTF file: GLB container or JSON text, schema and index
//! validation (gltf-json), and the bytes of every buffer.
//!
//! It reads bytes and checks the schema; it never builds `anim` data (see
//! `import`).
//!
//! Errors name the element; `import` adds the file.

use super::error::{AssetError, invalid};
use super::files;
use super::limits::{Budget, LoadOptions};
use crate::text::escape;
use base64::Engine;
use gltf::json::{self, validation::Validate};
use serde_json::Value;
use std::path::Path;

/// A parsed glTF file whose JSON indices have been validated, with its
/// buffers loaded.
#[derive(Debug)]
pub struct Source {
    /// The JSON document; every `Index` in it points at an existing element,
    /// except animation channel targets (see `Source::ignored_channels`), which
    /// gltf-json does not check: look them up with `get`.
    pub root: json::Root,
    /// Bytes of each buffer, cut to its `byteLength`.
    pub buffers: Vec<Vec<u8>>,
    /// For each animation, the original indices of the channels kept in
    /// `root` (channels without a target node were dropped before parsing).
    pub channel_indices: Vec<Vec<usize>>,
    /// Things that were accepted but worth knowing.
    pub warnings: Vec<String>,
}

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// Required extensions we may ignore: they change only how materials and
/// textures look (texture formats such as KHR_texture_basisu or
/// EXT_texture_webp included: vkskin then draws the base colour factor).
fn ignorable_extension(name: &str) -> bool {
    ["KHR_materials_", "KHR_texture_", "EXT_texture_"].iter().any(|prefix| name.starts_with(prefix))
}

/// Required extensions the importer implements.
const SUPPORTED_EXTENSIONS: &[&str] = &["KHR_mesh_quantization"];

/// Where a file's external files are and what reading them may cost.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// Where external buffers and images are looked up (`None` for
    /// in-memory data, where external files are an error).
    pub base_dir: Option<&'a Path>,
    /// The limits the user chose.
    pub options: &'a LoadOptions,
    /// The file's memory budget: buffers are charged to it.
    pub budget: &'a Budget,
}

/// Parses a file's bytes and loads its buffers.
pub fn parse(bytes: &[u8], cx: Context) -> Result<Source, AssetError> {
    let (json_bytes, bin) = if bytes.starts_with(GLB_MAGIC) { split_glb(bytes)? } else { (bytes, None) };
    let mut warnings = Vec::new();
    let (root, channel_indices) = parse_json(json_bytes, &mut warnings)?;
    validate_json(&root, &mut warnings)?;
    let buffers = load_buffers(&root, bin, cx)?;
    Ok(Source { root, buffers, channel_indices, warnings })
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Splits a GLB container into its JSON chunk and optional BIN chunk,
/// checking every length against the data actually present.
pub fn split_glb(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), AssetError> {
    if bytes.len() < 12 {
        return Err(invalid!("GLB header truncated: {} of 12 bytes", bytes.len()));
    }
    let version = read_u32(bytes, 4).unwrap_or(0);
    if version != 2 {
        return Err(invalid!("GLB version {version} is not supported (only 2)"));
    }
    let total = read_u32(bytes, 8).unwrap_or(0) as usize;
    if total > bytes.len() {
        return Err(invalid!("GLB truncated: header says {total} bytes, file has {}", bytes.len()));
    }
    if total < 12 {
        return Err(invalid!("GLB header says the file has {total} bytes, less than the header itself"));
    }
    let data = &bytes[..total];
    let mut at = 12;
    let mut json = None;
    let mut bin = None;
    let mut chunk = 0;
    while at < data.len() {
        let (Some(len), Some(kind)) = (read_u32(data, at), read_u32(data, at + 4)) else {
            return Err(invalid!("GLB chunk {chunk}: header truncated at byte {at}"));
        };
        let start = at + 8;
        let end = start.checked_add(len as usize).filter(|&e| e <= data.len()).ok_or_else(|| {
            invalid!(
                "GLB chunk {chunk}: length {len} runs past the end of the file ({} bytes left)",
                data.len() - start
            )
        })?;
        let body = &data[start..end];
        match (chunk, kind) {
            (0, CHUNK_JSON) => json = Some(body),
            (0, _) => return Err(invalid!("GLB chunk 0 has type {kind:#010x}, expected JSON")),
            (1, CHUNK_BIN) => bin = Some(body),
            // The spec says readers ignore chunks of unknown type.
            _ => {}
        }
        // Chunks are 4-byte aligned; a writer that forgot the padding still parses.
        at = end.next_multiple_of(4).min(data.len().max(end));
        chunk += 1;
    }
    let json = json.ok_or_else(|| invalid!("GLB has no JSON chunk"))?;
    Ok((json, bin))
}

/// The JSON as a `Root`, after dropping animation channels without a target
/// node (allowed by the spec, e.g. for KHR_animation_pointer, but rejected by
/// gltf-json's schema).
fn parse_json(bytes: &[u8], warnings: &mut Vec<String>) -> Result<(json::Root, Vec<Vec<usize>>), AssetError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut value: Value = serde_json::from_slice(bytes).map_err(AssetError::Json)?;
    let mut channel_indices = Vec::new();
    let mut dropped = false;
    if let Some(anims) = value.get_mut("animations").and_then(Value::as_array_mut) {
        for (a, anim) in anims.iter_mut().enumerate() {
            let mut kept = Vec::new();
            if let Some(channels) = anim.get_mut("channels").and_then(Value::as_array_mut) {
                let mut index = 0;
                channels.retain(|c| {
                    // A channel without any target is a schema error: keep it so serde reports it.
                    let keep = c.get("target").is_none_or(|t| t.get("node").is_some());
                    if keep {
                        kept.push(index);
                    } else {
                        warnings.push(format!("animation {a} channel {index}: no target node; ignored"));
                    }
                    index += 1;
                    keep
                });
                dropped |= kept.len() != index;
            }
            channel_indices.push(kept);
        }
    }
    // Parsing the text again keeps serde's line and column in schema errors.
    let root: json::Root = if dropped {
        serde_json::from_value(value).map_err(AssetError::Schema)?
    } else {
        // The tree goes first: a large file must not hold both at once.
        drop(value);
        serde_json::from_slice(bytes).map_err(AssetError::Schema)?
    };
    channel_indices.resize(root.animations.len(), Vec::new());
    for (kept, anim) in channel_indices.iter_mut().zip(&root.animations) {
        if kept.len() != anim.channels.len() {
            *kept = (0..anim.channels.len()).collect();
        }
    }
    Ok((root, channel_indices))
}

/// gltf-json's own validation (indices in range, enum values known, required
/// extensions), with the few checks it gets wrong for us handled here.
fn validate_json(root: &json::Root, warnings: &mut Vec<String>) -> Result<(), AssetError> {
    for (i, ext) in root.extensions_required.iter().enumerate() {
        if SUPPORTED_EXTENSIONS.contains(&ext.as_str()) {
            continue;
        }
        if ignorable_extension(ext) {
            warnings
                .push(format!("required extension {} is ignored (it does not affect geometry)", escape(ext)));
        } else {
            return Err(invalid!("extensionsRequired[{i}]: extension {} is not supported", escape(ext)));
        }
    }
    for ext in &root.extensions_used {
        if !SUPPORTED_EXTENSIONS.contains(&ext.as_str()) && !root.extensions_required.contains(ext) {
            warnings.push(format!("extension {} is used by the file but ignored by vkskin", escape(ext)));
        }
    }
    // gltf-json's primitive check indexes `accessors` with POSITION unchecked: check first.
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            for (semantic, index) in &prim.attributes {
                if index.value() >= root.accessors.len() {
                    let name = match semantic {
                        json::validation::Checked::Valid(s) => semantic_name(s),
                        json::validation::Checked::Invalid => "?".to_string(),
                    };
                    return Err(invalid!(
                        "meshes[{m}].primitives[{p}].attributes[\"{name}\"]: accessor {} does not exist ({} accessors)",
                        index.value(),
                        root.accessors.len()
                    ));
                }
            }
        }
    }
    let mut errors: Vec<String> = Vec::new();
    root.validate(root, json::Path::new, &mut |path, err| {
        let path = path().to_string();
        if path.starts_with("extensionsRequired") {
            return; // handled above
        }
        // An accessor without a bufferView (and without sparse values) is
        // all zeros, as the spec says; the reader supplies them.
        if path.starts_with("accessors[")
            && path.ends_with("].bufferView")
            && err == json::validation::Error::Missing
        {
            return;
        }
        // POSITION min/max are required by the spec but we never use them.
        if (path.ends_with("[\"POSITION\"].min") || path.ends_with("[\"POSITION\"].max"))
            && err == json::validation::Error::Missing
        {
            let what = path.trim_end_matches(".min").trim_end_matches(".max");
            let w = format!("{what}: POSITION accessor has no min/max");
            if !warnings.contains(&w) {
                warnings.push(w);
            }
            return;
        }
        let problem = match err {
            json::validation::Error::IndexOutOfBounds => "index out of range",
            json::validation::Error::Invalid => "invalid value",
            json::validation::Error::Missing => "missing",
            json::validation::Error::Oversize => "too large",
            json::validation::Error::Unsupported => "unsupported",
        };
        errors.push(format!("{path}: {problem}"));
    });
    match errors.len() {
        0 => Ok(()),
        1 => Err(AssetError::Invalid(errors.swap_remove(0))),
        n => Err(invalid!("{} (and {} more JSON errors)", errors[0], n - 1)),
    }
}

/// The glTF spelling of an attribute semantic.
pub fn semantic_name(s: &json::mesh::Semantic) -> String {
    use json::mesh::Semantic::*;
    match s {
        Extras(n) => format!("_{}", escape(n)),
        Positions => "POSITION".into(),
        Normals => "NORMAL".into(),
        Tangents => "TANGENT".into(),
        Colors(i) => format!("COLOR_{i}"),
        TexCoords(i) => format!("TEXCOORD_{i}"),
        Joints(i) => format!("JOINTS_{i}"),
        Weights(i) => format!("WEIGHTS_{i}"),
    }
}

fn load_buffers(root: &json::Root, bin: Option<&[u8]>, cx: Context) -> Result<Vec<Vec<u8>>, AssetError> {
    let mut out = Vec::with_capacity(root.buffers.len());
    for (i, buffer) in root.buffers.iter().enumerate() {
        let what = format!("buffer {i}");
        let len = buffer.byte_length.0;
        // Declared bytes are allocated below: charge them first.
        cx.budget.charge(len, || format!("{what} (byteLength {len})"))?;
        let mut data = match buffer.uri.as_deref() {
            None => match bin {
                Some(bin) if i == 0 => bin.to_vec(),
                Some(_) => {
                    return Err(invalid!("{what}: no uri (only buffer 0 may use the GLB BIN chunk)"));
                }
                None => return Err(invalid!("{what}: no uri and no GLB BIN chunk")),
            },
            Some(uri) if uri.starts_with("data:") => decode_data_uri(uri).map_err(|e| e.context(&what))?,
            Some(uri) => {
                let Some(dir) = cx.base_dir else {
                    return Err(invalid!(
                        "{what}: refers to external file \"{}\", but the file was read from memory",
                        escape(uri)
                    ));
                };
                let path = files::resolve_uri(&what, uri, dir, cx.options.allow_outside_uris)?;
                let data = files::read_prefix(&what, &path, len)?;
                // Real data on disk: the file may use more.
                cx.budget.add_backing(len);
                data
            }
        };
        if len > data.len() as u64 {
            return Err(invalid!("{what}: byteLength is {len} but the data has only {} bytes", data.len()));
        }
        // GLB padding (and generous writers) may leave bytes past byteLength: views must not see them.
        data.truncate(len as usize);
        out.push(data);
    }
    Ok(out)
}

/// Decodes a base64 `data:` URI.
pub fn decode_data_uri(uri: &str) -> Result<Vec<u8>, AssetError> {
    let Some((header, payload)) = uri.split_once(',') else {
        return Err(invalid!("data URI has no ','"));
    };
    if !header.ends_with(";base64") {
        return Err(invalid!("data URI \"{}\" is not base64", escape(header)));
    }
    // Some writers drop the '=' padding.
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine.decode(payload.trim()).map_err(AssetError::Base64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_uris() {
        assert_eq!(decode_data_uri("data:application/octet-stream;base64,AAEC").unwrap(), vec![0, 1, 2]);
        assert_eq!(decode_data_uri("data:application/gltf-buffer;base64,AAE").unwrap(), vec![0, 1]);
        assert!(decode_data_uri("data:text/plain,hello").is_err());
    }

    #[test]
    fn glb_truncation_is_an_error() {
        let mut glb = Vec::new();
        let json = br#"{"asset":{"version":"2.0"}}"#;
        let mut json = json.to_vec();
        while !json.len().is_multiple_of(4) {
            json.push(b' ');
        }
        glb.extend_from_slice(b"glTF");
        glb.extend_from_slice(&2u32.to_le_bytes());
        glb.extend_from_slice(&((12 + 8 + json.len()) as u32).to_le_bytes());
        glb.extend_from_slice(&(json.len() as u32).to_le_bytes());
        glb.extend_from_slice(&CHUNK_JSON.to_le_bytes());
        glb.extend_from_slice(&json);
        assert!(split_glb(&glb).is_ok());
        for cut in 0..glb.len() {
            assert!(split_glb(&glb[..cut]).is_err(), "cut at {cut}");
        }
    }
}
