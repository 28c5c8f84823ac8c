//! Texture images of a glTF file: their encoded bytes (from a GLB buffer
//! view, a data URI or an external file) and decoding PNG / JPEG to RGBA8.
//!
//! `Model` records only image indices (`Material::base_color_image`); this
//! module re-reads the file to get the bytes when a renderer needs them.

use super::source::{self, Source};
use std::path::{Path, PathBuf};

/// One image's encoded bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSource {
    /// PNG or JPEG bytes.
    pub bytes: Vec<u8>,
    /// The declared MIME type, when the file gives one.
    pub mime_type: Option<String>,
}

/// A decoded image: RGBA8, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes.
    pub rgba: Vec<u8>,
}

/// A glTF file opened for reading its images.
pub struct ImageFile {
    source: Source,
    base_dir: Option<PathBuf>,
}

impl ImageFile {
    /// Reads and parses `path` (buffers included).
    pub fn open(path: &Path) -> Result<Self, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read file: {e}", path.display()))?;
        let base_dir = path.parent().map(Path::to_path_buf);
        let source =
            source::parse(&bytes, base_dir.as_deref()).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(ImageFile { source, base_dir })
    }

    /// Number of images in the file.
    pub fn len(&self) -> usize {
        self.source.root.images.len()
    }

    /// Whether the file has no images.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The encoded bytes of image `index`.
    pub fn image(&self, index: usize) -> Result<ImageSource, String> {
        let root = &self.source.root;
        let image = root.images.get(index).ok_or_else(|| format!("image {index} does not exist"))?;
        let mime_type = image.mime_type.as_ref().map(|m| m.0.clone());
        let bytes = if let Some(view) = image.buffer_view {
            let v = root
                .buffer_views
                .get(view.value())
                .ok_or_else(|| format!("image {index}: buffer view {} does not exist", view.value()))?;
            let buffer = self
                .source
                .buffers
                .get(v.buffer.value())
                .ok_or_else(|| format!("image {index}: buffer {} does not exist", v.buffer.value()))?;
            let start = v.byte_offset.map_or(0, |o| o.0) as usize;
            let end = start.checked_add(v.byte_length.0 as usize).filter(|&e| e <= buffer.len());
            let end = end.ok_or_else(|| format!("image {index}: buffer view runs past its buffer"))?;
            buffer[start..end].to_vec()
        } else if let Some(uri) = &image.uri {
            if uri.starts_with("data:") {
                source::decode_data_uri(uri).map_err(|e| format!("image {index}: {e}"))?
            } else {
                let dir =
                    self.base_dir.as_deref().ok_or_else(|| format!("image {index}: no base directory"))?;
                let path = dir.join(source::percent_decode(uri));
                std::fs::read(&path).map_err(|e| format!("image {index}: {}: {e}", path.display()))?
            }
        } else {
            return Err(format!("image {index} has neither a buffer view nor a URI"));
        };
        Ok(ImageSource { bytes, mime_type })
    }
}

/// Reads image `index` of the glTF file at `path` (re-reads the whole file;
/// use `ImageFile` for several images).
pub fn load_image_bytes(path: &Path, index: usize) -> Result<ImageSource, String> {
    ImageFile::open(path)?.image(index)
}

/// Decodes PNG or JPEG bytes (by signature, whatever the MIME type says) to RGBA8.
pub fn decode_rgba8(image: &ImageSource) -> Result<DecodedImage, String> {
    let b = &image.bytes;
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        decode_png(b)
    } else if b.starts_with(&[0xFF, 0xD8]) {
        decode_jpeg(b)
    } else {
        Err(format!(
            "unsupported image format ({}); only PNG and JPEG are decoded",
            image.mime_type.as_deref().unwrap_or("unknown MIME type")
        ))
    }
}

fn decode_png(bytes: &[u8]) -> Result<DecodedImage, String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    // Palette and low-bit-depth images expand to 8 bits; 16-bit ones are stripped to 8.
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(|e| format!("PNG: {e}"))?;
    let size = reader.output_buffer_size().ok_or("PNG: image too large")?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| format!("PNG: {e}"))?;
    buf.truncate(info.buffer_size());
    let pixels = info.width as usize * info.height as usize;
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect(),
        png::ColorType::GrayscaleAlpha => {
            buf.chunks_exact(2).flat_map(|p| [p[0], p[0], p[0], p[1]]).collect()
        }
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        png::ColorType::Indexed => return Err("PNG: palette not expanded".into()),
    };
    if rgba.len() != pixels * 4 {
        return Err(format!("PNG: decoded {} bytes for {pixels} pixels", rgba.len()));
    }
    Ok(DecodedImage { width: info.width, height: info.height, rgba })
}

fn decode_jpeg(bytes: &[u8]) -> Result<DecodedImage, String> {
    let mut decoder = jpeg_decoder::Decoder::new(std::io::Cursor::new(bytes));
    let pixels = decoder.decode().map_err(|e| format!("JPEG: {e}"))?;
    let info = decoder.info().ok_or("JPEG: no image information")?;
    let rgba: Vec<u8> = match info.pixel_format {
        jpeg_decoder::PixelFormat::RGB24 => {
            pixels.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect()
        }
        jpeg_decoder::PixelFormat::L8 => pixels.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        // Big-endian 16-bit grey: keep the high byte.
        jpeg_decoder::PixelFormat::L16 => {
            pixels.chunks_exact(2).flat_map(|p| [p[0], p[0], p[0], 255]).collect()
        }
        jpeg_decoder::PixelFormat::CMYK32 => pixels.chunks_exact(4).flat_map(cmyk_to_rgba).collect(),
    };
    let (width, height) = (u32::from(info.width), u32::from(info.height));
    if rgba.len() != width as usize * height as usize * 4 {
        return Err(format!("JPEG: decoded {} bytes for {width}x{height}", rgba.len()));
    }
    Ok(DecodedImage { width, height, rgba })
}

/// One CMYK pixel (0 = no ink) as opaque RGBA: each colour is what its
/// ink leaves of white, darkened by black.
fn cmyk_to_rgba(p: &[u8]) -> [u8; 4] {
    let k = 255 - p[3] as u32;
    let c = |v: u8| ((255 - v as u32) * k / 255) as u8;
    [c(p[0]), c(p[1]), c(p[2]), 255]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmyk_by_hand() {
        assert_eq!(cmyk_to_rgba(&[0, 0, 0, 0]), [255, 255, 255, 255]);
        assert_eq!(cmyk_to_rgba(&[0, 255, 0, 0]), [255, 0, 255, 255]);
        // Half black: 255 * 127 / 255.
        assert_eq!(cmyk_to_rgba(&[0, 0, 255, 128]), [127, 127, 0, 255]);
        // 155 * 127 / 255 = 77.2, rounded down.
        assert_eq!(cmyk_to_rgba(&[100, 0, 0, 128]), [77, 127, 127, 255]);
        assert_eq!(cmyk_to_rgba(&[10, 20, 30, 255]), [0, 0, 0, 255]);
    }

    #[test]
    fn decodes_png_to_rgba() {
        let mut bytes = Vec::new();
        {
            let mut e = png::Encoder::new(&mut bytes, 2, 1);
            e.set_color(png::ColorType::Rgb);
            e.set_depth(png::BitDepth::Eight);
            let mut w = e.write_header().unwrap();
            w.write_image_data(&[255, 0, 0, 0, 0, 255]).unwrap();
        }
        let d = decode_rgba8(&ImageSource { bytes, mime_type: None }).unwrap();
        assert_eq!((d.width, d.height), (2, 1));
        assert_eq!(d.rgba, vec![255, 0, 0, 255, 0, 0, 255, 255]);
        assert!(decode_rgba8(&ImageSource { bytes: b"GIF89a".to_vec(), mime_type: None }).is_err());
    }

    #[test]
    fn reads_embedded_images_of_shared_models() {
        let Some(path) = crate::skip_policy::shared_path("CesiumMan/CesiumMan.glb") else { return };
        let file = ImageFile::open(&path).unwrap();
        assert!(!file.is_empty());
        let d = decode_rgba8(&file.image(0).unwrap()).unwrap();
        assert!(d.width > 0 && d.height > 0);
        assert_eq!(d.rgba.len(), (d.width * d.height * 4) as usize);
    }

    #[test]
    fn reads_external_and_data_uri_images() {
        let Some(assets) = crate::skip_policy::shared_path("") else { return };
        let files = [
            "MorphPrimitivesTest/glTF/MorphPrimitivesTest.gltf", // external JPEG
            "MorphStressTest/glTF/MorphStressTest.gltf",         // external PNGs
            "MorphStressTest/bevy-reexport-embedded/MorphStressTest.gltf", // data URIs
        ];
        for f in files {
            let Some(path) = crate::skip_policy::shared_path(f) else { continue };
            let file = ImageFile::open(&path).unwrap();
            assert!(!file.is_empty(), "{f}");
            for i in 0..file.len() {
                let d =
                    decode_rgba8(&file.image(i).unwrap()).unwrap_or_else(|e| panic!("{f} image {i}: {e}"));
                assert_eq!(d.rgba.len(), (d.width * d.height * 4) as usize);
            }
        }
        assert!(load_image_bytes(&assets.join("Fox/Fox.glb"), 99).is_err());
    }
}
