//! Writing rendered frames: PNG, and animated PNG (APNG) streamed frame by
//! frame. Files are written atomically (through `atomic_file`): a failed or
//! interrupted write never leaves a truncated image at the path asked for. It
//! never touches the GPU.

use super::error::RenderError;
use crate::atomic_file::{AtomicFile, OutputError, OutputWriter};
#[cfg(test)]
use std::fs::File;
use std::io::Write;
use std::path::Path;

fn encoder<W: Write>(out: W, width: u32, height: u32) -> png::Encoder<'static, W> {
    let mut encoder = png::Encoder::new(out, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    // The target is sRGB-encoded: say so, so viewers do not guess.
    encoder.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
    encoder
}

fn check_len(width: u32, height: u32, rgba: &[u8]) -> Result<(), RenderError> {
    let expected = width as usize * height as usize * 4;
    if rgba.len() != expected {
        return Err(RenderError::Invalid(format!(
            "frame has {} bytes, expected {expected} for {width}x{height} RGBA",
            rgba.len()
        )));
    }
    Ok(())
}

/// The encoder's error for the output `name`: a failed write (a full disk)
/// is the output's error, worded as every other file's; the rest is the
/// encoder's own.
fn png_error(name: &str) -> impl Fn(png::EncodingError) -> RenderError + '_ {
    move |source| match source {
        png::EncodingError::IoError(e) => OutputError::new(Path::new(name), "write", e).into(),
        source => RenderError::Png { name: name.to_string(), source },
    }
}

/// Writes one RGBA8 (sRGB) image as a PNG file, atomically (a failed
/// write leaves any earlier file at `path` as it was).
pub fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), RenderError> {
    let name = path.display().to_string();
    let file = AtomicFile::create(path)?;
    let mut out = file.writer()?;
    write_png_to(&mut out, &name, width, height, rgba)?;
    out.flush().map_err(|e| OutputError::new(path, "write", e))?;
    drop(out);
    Ok(file.commit()?)
}

/// Writes one RGBA8 (sRGB) image as PNG into `out` (`name` is used in messages).
pub fn write_png_to<W: Write>(
    out: W,
    name: &str,
    width: u32,
    height: u32,
    rgba: &[u8],
) -> Result<(), RenderError> {
    check_len(width, height, rgba)?;
    let mut writer = encoder(out, width, height).write_header().map_err(png_error(name))?;
    writer.write_image_data(rgba).map_err(png_error(name))?;
    writer.finish().map_err(png_error(name))
}

/// An animated PNG being written: frames are appended one at a time, so a
/// long animation never sits in memory whole.
pub struct ApngWriter<W: Write> {
    writer: Option<png::Writer<W>>,
    width: u32,
    height: u32,
    frames: u32,
    written: u32,
    name: String,
    /// The file [`create`](ApngWriter::create) writes, renamed into place by `finish`.
    file: Option<AtomicFile>,
}

impl ApngWriter<OutputWriter> {
    /// Creates `path` for `frames` frames of `width`x`height` played at
    /// `fps`, looping forever. The file appears at `path` only when
    /// [`finish`](ApngWriter::finish) succeeds (until then it is a hidden
    /// temporary file beside it, removed if the writer is dropped).
    pub fn create(path: &Path, width: u32, height: u32, frames: u32, fps: f32) -> Result<Self, RenderError> {
        let file = AtomicFile::create(path)?;
        // Unbuffered: png writes whole chunks, and a write error must show
        // in `finish`, not vanish in a buffer's drop.
        let out = file.writer()?.into_inner().map_err(|e| OutputError::new(path, "write", e.into_error()))?;
        let mut apng = Self::new(out, &path.display().to_string(), width, height, frames, fps)?;
        apng.file = Some(file);
        Ok(apng)
    }
}

impl<W: Write> ApngWriter<W> {
    /// Writes the header into `out` (`name` is used in messages).
    pub fn new(
        out: W,
        name: &str,
        width: u32,
        height: u32,
        frames: u32,
        fps: f32,
    ) -> Result<Self, RenderError> {
        if frames == 0 {
            return Err(RenderError::Invalid(format!("{name}: an animated PNG needs at least one frame")));
        }
        let (num, den) = frame_delay(fps);
        let mut encoder = encoder(out, width, height);
        encoder.set_animated(frames, 0).map_err(png_error(name))?;
        encoder.set_frame_delay(num, den).map_err(png_error(name))?;
        let writer = encoder.write_header().map_err(png_error(name))?;
        Ok(ApngWriter {
            writer: Some(writer),
            width,
            height,
            frames,
            written: 0,
            name: name.to_string(),
            file: None,
        })
    }

    /// Appends the next RGBA8 frame.
    pub fn write_frame(&mut self, rgba: &[u8]) -> Result<(), RenderError> {
        check_len(self.width, self.height, rgba)?;
        if self.written >= self.frames {
            return Err(RenderError::Invalid(format!(
                "{}: more than the announced {} frames",
                self.name, self.frames
            )));
        }
        let Some(writer) = self.writer.as_mut() else { return Err(self.finished()) };
        writer.write_image_data(rgba).map_err(png_error(&self.name))?;
        self.written += 1;
        Ok(())
    }

    /// Finishes the file (and, for [`create`](ApngWriter::create), moves it
    /// into place); every announced frame must have been written.
    pub fn finish(mut self) -> Result<(), RenderError> {
        if self.written != self.frames {
            return Err(RenderError::Invalid(format!(
                "{}: {} of {} frames written",
                self.name, self.written, self.frames
            )));
        }
        let writer = self.writer.take().ok_or_else(|| self.finished())?;
        writer.finish().map_err(png_error(&self.name))?;
        match self.file.take() {
            Some(file) => Ok(file.commit()?),
            None => Ok(()),
        }
    }

    fn finished(&self) -> RenderError {
        RenderError::Invalid(format!("{}: already finished", self.name))
    }
}

/// The APNG frame delay `num/den` seconds closest to `1/fps` that fits in u16s.
fn frame_delay(fps: f32) -> (u16, u16) {
    if !(fps.is_finite() && fps > 0.0) {
        return (1, 30);
    }
    if fps.fract() == 0.0 && fps <= u16::MAX as f32 {
        return (1, fps as u16);
    }
    // Milliseconds, clamped to what the chunk can say.
    let ms = (1000.0 / fps).round().clamp(1.0, u16::MAX as f32);
    (ms as u16, 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(w: u32, h: u32, value: u8) -> Vec<u8> {
        vec![value; (w * h * 4) as usize]
    }

    #[test]
    fn apng_round_trips_frame_count_and_delay() {
        let (w, h) = (8, 6);
        let mut bytes = Vec::new();
        let mut out = ApngWriter::new(&mut bytes, "test", w, h, 3, 24.0).unwrap();
        for i in 0..3 {
            out.write_frame(&frame(w, h, 40 * i as u8)).unwrap();
        }
        out.finish().unwrap();

        let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
        let mut reader = decoder.read_info().unwrap();
        let control = reader.info().animation_control().copied().expect("acTL chunk");
        assert_eq!(control.num_frames, 3);
        assert_eq!(control.num_plays, 0);
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let mut decoded = 0;
        while let Ok(info) = reader.next_frame(&mut buf) {
            assert_eq!((info.width, info.height), (w, h));
            let fc = reader.info().frame_control().copied().expect("fcTL");
            assert_eq!((fc.delay_num, fc.delay_den), (1, 24));
            assert_eq!(buf[0], 40 * decoded as u8);
            decoded += 1;
            if decoded == 3 {
                break;
            }
        }
        assert_eq!(decoded, 3);
    }

    #[test]
    fn apng_refuses_wrong_frame_counts_and_sizes() {
        let mut bytes = Vec::new();
        let mut out = ApngWriter::new(&mut bytes, "t", 2, 2, 1, 30.0).unwrap();
        assert!(out.write_frame(&[0; 3]).is_err());
        out.write_frame(&frame(2, 2, 1)).unwrap();
        assert!(out.write_frame(&frame(2, 2, 1)).is_err());
        out.finish().unwrap();
        let out = ApngWriter::new(Vec::new(), "t", 2, 2, 2, 30.0).unwrap();
        assert!(out.finish().is_err());
    }

    #[test]
    fn apng_file_appears_only_when_finished() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("anim.png");
        std::fs::write(&path, b"old").unwrap();
        let mut out = ApngWriter::create(&path, 2, 2, 2, 30.0).unwrap();
        out.write_frame(&frame(2, 2, 7)).unwrap();
        // Dropped half-written (a failed render): the old file stays, no temporary is left.
        drop(out);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let mut out = ApngWriter::create(&path, 2, 2, 2, 30.0).unwrap();
        out.write_frame(&frame(2, 2, 7)).unwrap();
        out.write_frame(&frame(2, 2, 9)).unwrap();
        out.finish().unwrap();
        let mut reader =
            png::Decoder::new(std::io::BufReader::new(File::open(&path).unwrap())).read_info().unwrap();
        assert_eq!(reader.info().animation_control().map(|c| c.num_frames), Some(2));
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut buf).unwrap();
        assert_eq!(buf[0], 7);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // A folder that does not exist fails at once, naming the file.
        let e = ApngWriter::create(&dir.path().join("missing/a.png"), 2, 2, 1, 30.0).err().unwrap();
        assert!(
            matches!(e, RenderError::Output(_))
                && e.to_string().contains("a.png was not written (No such file or directory)"),
            "{e}"
        );
    }

    #[test]
    fn frame_delays() {
        assert_eq!(frame_delay(30.0), (1, 30));
        assert_eq!(frame_delay(29.97), (33, 1000));
        assert_eq!(frame_delay(0.0), (1, 30));
    }
}
