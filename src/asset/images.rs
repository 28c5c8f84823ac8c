//! Texture images of a glTF file: their encoded bytes (from a GLB buffer
//! view, a data URI or an external file) and decoding PNG / JPEG to RGBA8.
//!
//! It never decodes an image before its header passed the dimension limit and
//! the memory budget.
//!
//! `Model` records only image indices (`Material::base_color_image`); this
//! module re-reads the file to get the bytes when a renderer needs them.
//! An image's header is read first: one larger than the dimension limit, or
//! whose pixels would not fit the file's memory budget, is refused before
//! anything is decoded.

use super::error::{AssetError, ImportError, invalid};
use super::files;
use super::limits::{Budget, LoadOptions, MAX_IMAGE_DIMENSION};
use super::model::Model;
use super::source::{self, Source};
use std::path::{Path, PathBuf};

/// Bytes decoding takes per pixel: the decoder's output (at most 4 bytes a
/// pixel after stripping 16-bit channels) plus the RGBA8 result.
const DECODE_BYTES_PER_PIXEL: u64 = 8;

/// What decoding one image may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageLimits {
    /// Largest width or height (the device's `maxImageDimension2D`).
    pub max_dimension: u32,
    /// Most bytes the decoder may allocate.
    pub max_bytes: u64,
}

impl Default for ImageLimits {
    fn default() -> Self {
        ImageLimits { max_dimension: MAX_IMAGE_DIMENSION, max_bytes: super::limits::BASE_ALLOWANCE }
    }
}

/// One image's encoded bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSource {
    /// PNG or JPEG bytes.
    pub bytes: Vec<u8>,
    /// The declared MIME type, when the file gives one.
    pub mime_type: Option<String>,
    /// What decoding it may take.
    pub limits: ImageLimits,
}

impl ImageSource {
    /// Bytes to decode within the default limits.
    pub fn new(bytes: Vec<u8>, mime_type: Option<String>) -> Self {
        ImageSource { bytes, mime_type, limits: ImageLimits::default() }
    }
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
    options: LoadOptions,
    budget: Budget,
}

impl ImageFile {
    /// Reads and parses `path` (buffers included) with the default limits.
    pub fn open(path: &Path) -> Result<Self, ImportError> {
        Self::open_with(path, &LoadOptions::default(), 0)
    }

    /// The images of an imported model, read within the limits it was
    /// loaded with and sharing its memory budget.
    pub fn for_model(model: &Model) -> Result<Self, ImportError> {
        Self::open_with(Path::new(&model.file), &model.load_options, model.memory_used)
    }

    /// Reads and parses `path` within `options`, `already_used` bytes of the
    /// file's budget being spent (by its import).
    pub fn open_with(path: &Path, options: &LoadOptions, already_used: u64) -> Result<Self, ImportError> {
        let file = path.display().to_string();
        let error = |e| ImportError::new(&file, e);
        let bytes = files::read_file("", path, |size| options.check_file_size(size)).map_err(error)?;
        let budget = Budget::new(options, bytes.len() as u64);
        budget.charge(already_used.min(budget.remaining()), String::new).map_err(error)?;
        let base_dir = path.parent().map(Path::to_path_buf);
        let cx = source::Context { base_dir: base_dir.as_deref(), options, budget: &budget };
        let source = source::parse(&bytes, cx).map_err(error)?;
        Ok(ImageFile { source, base_dir, options: options.clone(), budget })
    }

    /// Number of images in the file.
    pub fn len(&self) -> usize {
        self.source.root.images.len()
    }

    /// Whether the file has no images.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The encoded bytes of image `index`, once its header shows that it
    /// fits the dimension limit and the budget (which it is charged to).
    pub fn image(&self, index: usize) -> Result<ImageSource, AssetError> {
        let root = &self.source.root;
        let what = format!("image {index}");
        let image = root.images.get(index).ok_or_else(|| invalid!("{what} does not exist"))?;
        let mime_type = image.mime_type.as_ref().map(|m| m.0.clone());
        let bytes = if let Some(view) = image.buffer_view {
            let v = root
                .buffer_views
                .get(view.value())
                .ok_or_else(|| invalid!("{what}: buffer view {} does not exist", view.value()))?;
            let buffer = self
                .source
                .buffers
                .get(v.buffer.value())
                .ok_or_else(|| invalid!("{what}: buffer {} does not exist", v.buffer.value()))?;
            let start = v.byte_offset.map_or(0, |o| o.0) as usize;
            let end = start.checked_add(v.byte_length.0 as usize).filter(|&e| e <= buffer.len());
            let end = end.ok_or_else(|| invalid!("{what}: buffer view runs past its buffer"))?;
            buffer[start..end].to_vec()
        } else if let Some(uri) = &image.uri {
            if uri.starts_with("data:") {
                source::decode_data_uri(uri).map_err(|e| e.context(&what))?
            } else {
                let dir = self.base_dir.as_deref().ok_or_else(|| invalid!("{what}: no base directory"))?;
                let path = files::resolve_uri(&what, uri, dir, self.options.allow_outside_uris)?;
                files::read_file(&what, &path, |size| self.budget.charge(size, || format!("{what} file")))?
            }
        } else {
            return Err(invalid!("{what} has neither a buffer view nor a URI"));
        };
        let (width, height) = header_size(&bytes).map_err(|e| e.context(&what))?;
        let max_dimension = self.options.max_image_dimension;
        if width > max_dimension || height > max_dimension {
            return Err(AssetError::ImageTooLarge { index, width, height, limit: max_dimension });
        }
        let max_bytes = u64::from(width) * u64::from(height) * DECODE_BYTES_PER_PIXEL;
        self.budget.charge(max_bytes, || format!("{what} ({width}x{height})"))?;
        Ok(ImageSource { bytes, mime_type, limits: ImageLimits { max_dimension, max_bytes } })
    }
}

/// Reads image `index` of the glTF file at `path` (re-reads the whole file;
/// use `ImageFile` for several images).
pub fn load_image_bytes(path: &Path, index: usize) -> Result<ImageSource, AssetError> {
    ImageFile::open(path).map_err(|e| e.error)?.image(index)
}

/// The width and height an image's header declares (nothing decoded).
pub fn header_size(bytes: &[u8]) -> Result<(u32, u32), AssetError> {
    if bytes.starts_with(PNG_SIGNATURE) {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let info = decoder.read_header_info().map_err(AssetError::Png)?;
        Ok((info.width, info.height))
    } else if bytes.starts_with(&[0xFF, 0xD8]) {
        let mut decoder = jpeg_decoder::Decoder::new(std::io::Cursor::new(bytes));
        decoder.read_info().map_err(AssetError::Jpeg)?;
        let info = decoder.info().ok_or_else(|| invalid!("JPEG: no image information"))?;
        Ok((u32::from(info.width), u32::from(info.height)))
    } else {
        Err(invalid!("unsupported image format; only PNG and JPEG are decoded"))
    }
}

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Decodes PNG or JPEG bytes (by signature, whatever the MIME type says) to
/// RGBA8, within `image.limits` (checked on the header first).
pub fn decode_rgba8(image: &ImageSource) -> Result<DecodedImage, AssetError> {
    let b = &image.bytes;
    let unsupported = || {
        invalid!(
            "unsupported image format ({}); only PNG and JPEG are decoded",
            crate::text::escape(image.mime_type.as_deref().unwrap_or("unknown MIME type"))
        )
    };
    if !(b.starts_with(PNG_SIGNATURE) || b.starts_with(&[0xFF, 0xD8])) {
        return Err(unsupported());
    }
    let (width, height) = header_size(b)?;
    let limit = image.limits.max_dimension;
    if width > limit || height > limit {
        return Err(invalid!("{width}x{height} is larger than {limit}x{limit}, the largest image allowed"));
    }
    let needed = u64::from(width) * u64::from(height) * DECODE_BYTES_PER_PIXEL;
    if needed > image.limits.max_bytes {
        return Err(AssetError::OverBudget {
            what: format!("a {width}x{height} image"),
            asked: needed,
            allowed: image.limits.max_bytes,
            max_memory: image.limits.max_bytes,
        });
    }
    // Slack for the decoders' own tables and row buffers.
    let max_bytes = usize::try_from(image.limits.max_bytes.saturating_add(1 << 20)).unwrap_or(usize::MAX);
    if b.starts_with(PNG_SIGNATURE) { decode_png(b, max_bytes) } else { decode_jpeg(b, max_bytes) }
}

fn decode_png(bytes: &[u8], max_bytes: usize) -> Result<DecodedImage, AssetError> {
    let mut decoder =
        png::Decoder::new_with_limits(std::io::Cursor::new(bytes), png::Limits { bytes: max_bytes });
    // Palette and low-bit-depth images expand to 8 bits; 16-bit ones are stripped to 8.
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(AssetError::Png)?;
    let size = reader.output_buffer_size().ok_or_else(|| invalid!("PNG: image too large"))?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(AssetError::Png)?;
    buf.truncate(info.buffer_size());
    let pixels = info.width as usize * info.height as usize;
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect(),
        png::ColorType::GrayscaleAlpha => {
            buf.chunks_exact(2).flat_map(|p| [p[0], p[0], p[0], p[1]]).collect()
        }
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        png::ColorType::Indexed => return Err(invalid!("PNG: palette not expanded")),
    };
    if rgba.len() != pixels * 4 {
        return Err(invalid!("PNG: decoded {} bytes for {pixels} pixels", rgba.len()));
    }
    Ok(DecodedImage { width: info.width, height: info.height, rgba })
}

fn decode_jpeg(bytes: &[u8], max_bytes: usize) -> Result<DecodedImage, AssetError> {
    let mut decoder = jpeg_decoder::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_max_decoding_buffer_size(max_bytes);
    let pixels = decoder.decode().map_err(AssetError::Jpeg)?;
    let info = decoder.info().ok_or_else(|| invalid!("JPEG: no image information"))?;
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
        return Err(invalid!("JPEG: decoded {} bytes for {width}x{height}", rgba.len()));
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
        let d = decode_rgba8(&ImageSource::new(bytes, None)).unwrap();
        assert_eq!((d.width, d.height), (2, 1));
        assert_eq!(d.rgba, vec![255, 0, 0, 255, 0, 0, 255, 255]);
        assert!(decode_rgba8(&ImageSource::new(b"GIF89a".to_vec(), None)).is_err());
    }

    #[test]
    fn reads_embedded_images_of_shared_models() {
        let Some(path) = crate::testing::skip::shared_path("CesiumMan/CesiumMan.glb") else { return };
        let file = ImageFile::open(&path).unwrap();
        assert!(!file.is_empty());
        let d = decode_rgba8(&file.image(0).unwrap()).unwrap();
        assert!(d.width > 0 && d.height > 0);
        assert_eq!(d.rgba.len(), (d.width * d.height * 4) as usize);
    }

    #[test]
    fn reads_external_and_data_uri_images() {
        let Some(assets) = crate::testing::skip::shared_path("") else { return };
        let files = [
            "MorphPrimitivesTest/glTF/MorphPrimitivesTest.gltf", // external JPEG
            "MorphStressTest/glTF/MorphStressTest.gltf",         // external PNGs
            "MorphStressTest/bevy-reexport-embedded/MorphStressTest.gltf", // data URIs
        ];
        for f in files {
            let Some(path) = crate::testing::skip::shared_path(f) else { continue };
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
