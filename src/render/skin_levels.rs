//! Skinning only what a detail level draws.
//!
//! A character drawn at a coarser detail level (`render::detail_levels`)
//! reads a fraction of its primitives' vertices, yet the skin pass would
//! still skin all of them, and skinning is the crowd's largest GPU cost
//! once the draws are cheap (12.6 ms for 100,000 characters on an H200,
//! against 1.0 ms for their poses: the gpu_pose guide page). So each primitive with coarser levels
//! gets a table of the vertices each level's triangles use, and the skin
//! pass skins a character's primitive at its level through that list:
//! the `v`-th thread given to the primitive's record skins vertex
//! `list[v]`, and a character gets threads for its level's lists alone
//! (`plan::SkinRun`). Thread `t` writes the `t`-th vertex of the
//! character's output: a character's level-`k` vertices lie one after the
//! other, its records' lists in turn, so a far character's few vertices
//! share cache lines instead of lying scattered through its full mesh's
//! place. A draw finds index `i`'s vertex through the level's map
//! (`append_maps`: the inverse of the list), while the index lists, UVs and
//! vertex-shader skinning keep the primitive's own vertex numbers. At
//! level 0 every list is the whole primitive and the map is the identity,
//! so a full skin (every readback) lies in the primitive's own order.
//!
//! A primitive's table, in u32 words: per coarser level (1, 2, ...) its
//! vertex count and where its list starts, counted from the table's first
//! word; then the lists (sorted vertex indices, so the reads walk the
//! streams forward). skin_main.glsl reads it from the slot's record buffer
//! (`plan::SkinLayout::level_words`). The frame's draw order says which
//! characters are drawn at each level (`SkinLevels`); a character no pass
//! of the frame draws is not skinned at all.

use super::detail_levels::DETAIL_LEVELS;
use super::draw_order::DrawOrder;

/// `GpuPrimitive::skin_levels` of a primitive whose every level draws its
/// full list (no table: every vertex is skinned at every level).
pub const NO_SKIN_LEVELS: u32 = u32::MAX;

/// Words of a table before its lists: a count and a start per coarser level.
pub const TABLE_HEADER: usize = 2 * (DETAIL_LEVELS - 1);

/// Where level `level`'s (1..) vertex count sits in a table; its list's
/// start is the next word. skin_main.glsl reads them so, and needs no level
/// count.
fn header(level: usize) -> usize {
    2 * (level - 1)
}

/// Appends to `words` the table of a primitive of `vertex_count` vertices
/// whose level `k` draws `indices[first..first + count]` for `levels[k] =
/// (first, count)` (indices checked below `vertex_count`); returns its
/// offset in `words`, or [`NO_SKIN_LEVELS`] when no coarser level draws
/// fewer triangles than the full list. Setup work: it allocates.
pub fn append_table(
    words: &mut Vec<u32>,
    vertex_count: u32,
    indices: &[u32],
    levels: &[(u32, u32); DETAIL_LEVELS],
) -> u32 {
    if levels[1..].iter().all(|&l| l == levels[0]) {
        return NO_SKIN_LEVELS;
    }
    let table = words.len();
    words.resize(table + TABLE_HEADER, 0);
    let mut used = vec![false; vertex_count as usize];
    for (k, &(first, count)) in levels.iter().enumerate().skip(1) {
        used.iter_mut().for_each(|u| *u = false);
        let list = indices.get(first as usize..(first + count) as usize).unwrap_or(&[]);
        for &i in list {
            if let Some(u) = used.get_mut(i as usize) {
                *u = true;
            }
        }
        let start = words.len();
        words.extend((0..vertex_count).filter(|&v| used[v as usize]));
        words[table + header(k)] = (words.len() - start) as u32;
        words[table + header(k) + 1] = (start - table) as u32;
    }
    table as u32
}

/// Vertices the skin pass skins of a primitive of `vertex_count` vertices
/// at `level`, its table at `table` in `words` (or [`NO_SKIN_LEVELS`]).
pub fn skinned_vertices(words: &[u32], table: u32, vertex_count: u32, level: usize) -> u32 {
    if table == NO_SKIN_LEVELS || level == 0 {
        return vertex_count;
    }
    words.get(table as usize + header(level)).copied().unwrap_or(vertex_count)
}

/// The vertex that the `v`-th thread of a primitive skins at `level`, its
/// table at `table` in `words` (or [`NO_SKIN_LEVELS`]): `v` itself at
/// level 0 and without a table, else the `v`-th of the level's list
/// (`v` below `skinned_vertices`). skin_main.glsl's `level_vertex`.
pub fn level_vertex(words: &[u32], table: u32, level: usize, v: u32) -> u32 {
    if table == NO_SKIN_LEVELS || level == 0 {
        return v;
    }
    let table = table as usize;
    words[table + words[table + header(level) + 1] as usize + v as usize]
}

/// `GpuPrimitive::level_maps` entry of a level drawn by vertex index
/// itself (level 0, or a primitive without a table): no map.
pub const NO_LEVEL_MAP: u32 = u32::MAX;

/// Appends to `maps` the inverse of each coarser level's list of the
/// primitive whose table is at `table` in `words` (`append_table`): for
/// every vertex of the primitive, its place in the level's list (0 for a
/// vertex the level does not draw: its triangles never name it). The skin
/// pass writes a character's level-`k` vertices one after the other, in
/// the list's order, so a draw finds vertex `i` at `map[i]` of its
/// primitive's part. Returns each level's first word in `maps`
/// ([`NO_LEVEL_MAP`] at level 0 and without a table); a level whose list
/// is the level above's shares its map. Setup work: it allocates.
pub fn append_maps(
    maps: &mut Vec<u32>,
    words: &[u32],
    table: u32,
    vertex_count: u32,
) -> [u32; DETAIL_LEVELS] {
    let mut firsts = [NO_LEVEL_MAP; DETAIL_LEVELS];
    if table == NO_SKIN_LEVELS {
        return firsts;
    }
    let list = |k: usize| {
        let (t, count) = (table as usize, skinned_vertices(words, table, vertex_count, k) as usize);
        let start = t + words[t + header(k) + 1] as usize;
        &words[start..start + count]
    };
    for k in 1..DETAIL_LEVELS {
        if k > 1 && list(k) == list(k - 1) {
            firsts[k] = firsts[k - 1];
            continue;
        }
        firsts[k] = maps.len() as u32;
        let first = maps.len();
        maps.resize(first + vertex_count as usize, 0);
        for (place, &vertex) in list(k).iter().enumerate() {
            maps[first + vertex as usize] = place as u32;
        }
    }
    firsts
}

/// A frame's detail level per character, for the skin pass: what it
/// skins of each (`SkinPass::record`).
#[derive(Debug, Clone, Copy)]
pub struct SkinLevels<'a> {
    /// The frame's draw order, its levels chosen: each character's bucket
    /// (`DrawOrder::buckets`: a `draw_order::HIDDEN` one is neither
    /// uploaded nor skinned), and the characters some pass draws, grouped
    /// by run and level (`DrawOrder::drawn_levels`), which the skin pass
    /// skins level by level. Characters in none of its runs (the scenery)
    /// skin whole.
    pub order: &'a DrawOrder,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_lists_the_vertices_each_level_draws() {
        // Six vertices; level 0 draws two triangles, level 1 one of them,
        // the coarser levels repeat level 1.
        let indices = [0, 1, 2, 2, 4, 5, 5, 4, 2];
        let mut levels = [(6, 3); DETAIL_LEVELS];
        levels[0] = (0, 6);
        let mut words = vec![7];
        let table = append_table(&mut words, 6, &indices, &levels);
        assert_eq!(table, 1);
        let t = table as usize;
        // Counts and starts, level by level: each list three words long.
        let header: Vec<u32> =
            (1..DETAIL_LEVELS as u32).flat_map(|k| [3, TABLE_HEADER as u32 + 3 * (k - 1)]).collect();
        assert_eq!(&words[t..t + TABLE_HEADER], &header[..]);
        for k in 1..DETAIL_LEVELS {
            let start = t + words[t + 2 * (k - 1) + 1] as usize;
            assert_eq!(&words[start..start + 3], &[2, 4, 5], "level {k}");
            assert_eq!(skinned_vertices(&words, table, 6, k), 3);
        }
        assert_eq!(skinned_vertices(&words, table, 6, 0), 6);
        assert_eq!((0..3).map(|v| level_vertex(&words, table, 2, v)).collect::<Vec<_>>(), [2, 4, 5]);
        assert_eq!(level_vertex(&words, table, 0, 4), 4);
        assert_eq!(words.len(), t + TABLE_HEADER + 3 * (DETAIL_LEVELS - 1));
        // Every level draws vertices 2, 4, 5 from places 0, 1, 2: one map.
        let mut maps = vec![9];
        let firsts = append_maps(&mut maps, &words, table, 6);
        assert_eq!(firsts[0], NO_LEVEL_MAP);
        assert!(firsts[1..].iter().all(|&f| f == 1), "{firsts:?}");
        assert_eq!(maps, [9, 0, 0, 0, 0, 1, 2]);
    }

    #[test]
    fn each_distinct_list_gets_its_own_map() {
        // Level 1 draws vertices 0..4, level 2 and coarser 1, 3, 4.
        let indices = [0, 1, 2, 2, 3, 4, 1, 3, 4];
        let mut levels = [(6, 3); DETAIL_LEVELS];
        levels[0] = (0, 9);
        levels[1] = (0, 6);
        let mut words = Vec::new();
        let table = append_table(&mut words, 5, &indices, &levels);
        let mut maps = Vec::new();
        let firsts = append_maps(&mut maps, &words, table, 5);
        assert_eq!(firsts, [NO_LEVEL_MAP, 0, 5, 5, 5]);
        assert_eq!(maps, [0, 1, 2, 3, 4, 0, 0, 0, 1, 2]);
        for k in 1..DETAIL_LEVELS {
            for v in 0..skinned_vertices(&words, table, 5, k) {
                let vertex = level_vertex(&words, table, k, v);
                assert_eq!(maps[(firsts[k] + vertex) as usize], v, "level {k}");
            }
        }
    }

    #[test]
    fn a_primitive_that_never_simplifies_has_no_table() {
        let mut words = Vec::new();
        let levels = [(0, 3); DETAIL_LEVELS];
        assert_eq!(append_table(&mut words, 3, &[0, 1, 2], &levels), NO_SKIN_LEVELS);
        assert!(words.is_empty());
        assert_eq!(skinned_vertices(&words, NO_SKIN_LEVELS, 3, 2), 3);
        assert_eq!(append_maps(&mut words, &[], NO_SKIN_LEVELS, 3), [NO_LEVEL_MAP; DETAIL_LEVELS]);
        assert!(words.is_empty());
    }
}
