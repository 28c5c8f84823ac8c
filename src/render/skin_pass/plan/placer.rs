//! Lays out one character of a [`SkinLayout`] after its current ends:
//! the skins' palette ranges, then each mesh instance's primitives (their
//! output vertices, skin records, morph offsets and level tables), checked
//! against the output's windows. `SkinLayout::add_character` commits what
//! it returns.

use super::{
    CharacterPlace, INFLUENCE_BYTES, MORPH_ENTRY_BYTES, ModelPlace, NO_RECORD, PALETTE_ENTRY_BYTES,
    PrimitiveOutput, RECORD_BYTES, SOURCE_BYTES, SkinLayout,
};
use crate::anim::MeshInstance;
use crate::asset::Model;
use crate::gpu::GpuError;
use crate::render::detail_levels::DETAIL_LEVELS;
use crate::render::gpu_model::{GpuPrimitive, StreamTable};
use crate::render::layout::{NO_MORPHS, SkinRecord};
use crate::render::skin_levels::{self, NO_SKIN_LEVELS};
use crate::render::skin_pass::OUTPUT_STRIDE;

/// One character as `Placer` laid it out.
pub(super) struct Placed {
    pub(super) character: CharacterPlace,
    pub(super) records: Vec<SkinRecord>,
    pub(super) record_tables: Vec<u32>,
    pub(super) palette_end: u32,
    pub(super) weight_end: u32,
    pub(super) output_end: u32,
}

/// Lays out one character after a layout's current ends, without changing
/// the layout (`SkinLayout::add_character` commits what it returns).
pub(super) struct Placer<'a> {
    table: StreamTable<'a>,
    /// The model's index in the layout, and where its streams lie.
    model_index: usize,
    model: ModelPlace,
    /// Index of the character's first record in the layout.
    first_record: usize,
    /// Output vertices one window of the output holds.
    window_vertices: u32,
    weight_base: u32,
    /// The next free palette entry and output vertex (u64: checked against
    /// u32 at the end).
    palette: u64,
    output: u64,
    rigid: Vec<(u32, u32)>,
    outputs: Vec<PrimitiveOutput>,
    records: Vec<SkinRecord>,
    record_tables: Vec<u32>,
    level_vertices: [u64; DETAIL_LEVELS],
    traffic: (u64, u64),
}

impl<'a> Placer<'a> {
    pub(super) fn start(
        layout: &SkinLayout,
        (model_index, model): (usize, ModelPlace),
        table: StreamTable<'a>,
    ) -> Self {
        Placer {
            table,
            model_index,
            model,
            first_record: layout.records.len(),
            window_vertices: layout.window_vertices,
            weight_base: layout.weight_len,
            palette: u64::from(layout.palette_len),
            output: u64::from(layout.total_vertices),
            rigid: Vec::new(),
            outputs: Vec::new(),
            records: Vec::new(),
            record_tables: Vec::new(),
            level_vertices: [0; DETAIL_LEVELS],
            traffic: (0, 0),
        }
    }

    /// The skins' palette ranges first, then every instance's primitives.
    pub(super) fn place(mut self, asset: &Model) -> Result<Placed, GpuError> {
        let palette_start = self.palette;
        // Skins that share a palette run share its base.
        let skin_bases: Vec<u32> = asset
            .palette_ranges()
            .iter()
            .map(|&[start, _]| (palette_start + u64::from(start)) as u32)
            .collect();
        self.palette += asset.palette_len() as u64;
        let weights = u64::from(self.weight_base) + asset.rest_morph_weights.len() as u64;
        let output_start = self.output;
        for (i, instance) in asset.instances.iter().enumerate() {
            self.place_instance(asset, &skin_bases, i, instance)?;
        }
        self.fits_one_window(asset, output_start)?;
        // Output offsets and palette indices are u32 in the shaders.
        let max = u64::from(u32::MAX);
        if self.output > max || self.palette > max || weights > max {
            return Err(GpuError::new(format!("{}: too many vertices or joints to skin", asset.file)));
        }
        // Each palette entry and morph weight is read at least once.
        self.traffic.0 +=
            (self.palette - palette_start) * PALETTE_ENTRY_BYTES + asset.rest_morph_weights.len() as u64 * 4;
        Ok(Placed {
            character: CharacterPlace {
                model: self.model_index,
                palette_range: (palette_start as u32, self.palette as u32),
                traffic: self.traffic,
                skin_bases,
                rigid: self.rigid,
                weight_base: self.weight_base,
                level_vertices: self.level_vertices.map(|v| v as u32),
                outputs: self.outputs,
            },
            records: self.records,
            record_tables: self.record_tables,
            palette_end: self.palette as u32,
            weight_end: weights as u32,
            output_end: self.output as u32,
        })
    }

    /// Whether the character's full output (from `start`) fits one
    /// window: each window is its own buffer, and a draw reads a character
    /// from one.
    fn fits_one_window(&self, asset: &Model, start: u64) -> Result<(), GpuError> {
        let (vertices, window) = (self.output - start, u64::from(self.window_vertices));
        if vertices > window {
            return Err(GpuError::new(format!(
                "{}: one character's skinned output ({vertices} vertices, {} bytes) is larger than \
                 one output buffer holds ({window} vertices)",
                asset.file,
                vertices * OUTPUT_STRIDE
            )));
        }
        Ok(())
    }

    /// The primitives of instance `i`: skinned ones read their skin's
    /// palette range; the others share one rigid entry of the instance.
    fn place_instance(
        &mut self,
        asset: &Model,
        skin_bases: &[u32],
        i: usize,
        instance: &MeshInstance,
    ) -> Result<(), GpuError> {
        let context =
            |e: String| GpuError::new(format!("{}: instance of node {}: {e}", asset.file, instance.node));
        let skin_base = match instance.skin {
            Some(s) => Some(*skin_bases.get(s).ok_or_else(|| context(format!("no skin {s}")))?),
            None => None,
        };
        // One palette entry holding the node's world matrix, made on first
        // use: for unskinned instances, and for primitives without joints
        // in a skinned one (they move rigidly with their node, as the CPU
        // reference skins them).
        let mut rigid_entry = None;
        let morph_end = instance.morph_offset as u64 + instance.morph_count as u64;
        if morph_end > asset.rest_morph_weights.len() as u64 {
            return Err(context("morph weights outside the pose".into()));
        }
        let table = self.table;
        let first =
            *table.mesh_first_primitive.get(instance.mesh).ok_or_else(|| context("no mesh".into()))?;
        for (p, prim) in table.mesh_primitives(instance.mesh).iter().enumerate() {
            let (palette_offset, influence_sets) = match (instance.skin, skin_base) {
                (Some(s), Some(skin_base)) if prim.influence_sets > 0 => {
                    let joints = asset.skins[s].joints.len();
                    if prim.max_joint as usize >= joints {
                        return Err(context(format!(
                            "joint {} outside skin {s} of {joints} joints",
                            prim.max_joint
                        )));
                    }
                    (skin_base, prim.influence_sets)
                }
                _ => {
                    let entry = *rigid_entry.get_or_insert_with(|| {
                        self.rigid.push((instance.joint, self.palette as u32));
                        self.palette += 1;
                        self.palette as u32 - 1
                    });
                    (entry, 0)
                }
            };
            if prim.morph_offset != NO_MORPHS && prim.target_count > instance.morph_count {
                return Err(context(format!(
                    "{} morph targets but {} weights",
                    prim.target_count, instance.morph_count
                )));
            }
            let weight_offset = self.weight_base + instance.morph_offset;
            self.place_primitive(i, first + p, prim, (palette_offset, influence_sets), weight_offset);
        }
        Ok(())
    }

    /// The output range, record and traffic of one primitive of instance
    /// `instance` reading `palette` = (palette offset, influence sets).
    fn place_primitive(
        &mut self,
        instance: usize,
        gpu_primitive: usize,
        prim: &GpuPrimitive,
        palette: (u32, u32),
        weight_offset: u32,
    ) {
        let (palette_offset, influence_sets) = palette;
        let has_vertices = prim.vertex_count > 0;
        self.outputs.push(PrimitiveOutput {
            instance,
            gpu_primitive,
            output_offset: self.output as u32,
            vertex_count: prim.vertex_count,
            // check_ranges bounds the record count far below u32::MAX.
            record: if has_vertices { (self.first_record + self.records.len()) as u32 } else { NO_RECORD },
        });
        if has_vertices {
            let (read, written) = primitive_traffic(prim, influence_sets, self.table.morph_ranges);
            self.traffic.0 += read;
            self.traffic.1 += written;
            let base = self.model;
            self.records.push(SkinRecord {
                source_offset: base.sources + prim.source_offset,
                vertex_count: prim.vertex_count,
                output_offset: self.output as u32,
                palette_offset,
                influence_offset: base.influences + prim.influence_offset,
                influence_sets,
                morph_offset: if prim.morph_offset == NO_MORPHS {
                    NO_MORPHS
                } else {
                    base.morph_ranges + prim.morph_offset
                },
                weight_offset,
            });
            let words = self.table.skin_levels;
            let table = match prim.skin_levels {
                NO_SKIN_LEVELS => NO_SKIN_LEVELS,
                t => base.skin_levels + t,
            };
            self.record_tables.push(table);
            for (level, sum) in self.level_vertices.iter_mut().enumerate() {
                *sum += u64::from(skin_levels::skinned_vertices(
                    words,
                    prim.skin_levels,
                    prim.vertex_count,
                    level,
                ));
            }
        }
        self.output += u64::from(prim.vertex_count);
    }
}

/// Bytes the skinning of one primitive (with vertices) reads and writes per
/// frame: sources, influence sets, morph ranges and entries, and its record
/// in; skinned vertices out. `morph_ranges` is its model's stream.
fn primitive_traffic(prim: &GpuPrimitive, influence_sets: u32, morph_ranges: &[u32]) -> (u64, u64) {
    let vertices = u64::from(prim.vertex_count);
    let mut read = vertices * (SOURCE_BYTES + INFLUENCE_BYTES * u64::from(influence_sets));
    if prim.morph_offset != NO_MORPHS {
        let first = prim.morph_offset as usize;
        let entries = morph_ranges.get(first + prim.vertex_count as usize).zip(morph_ranges.get(first));
        read += 4 * (vertices + 1) + entries.map_or(0, |(b, a)| u64::from(b - a) * MORPH_ENTRY_BYTES);
    }
    (read + RECORD_BYTES, vertices * OUTPUT_STRIDE)
}
