//! Eight f32 lanes per operation (or four f64 lanes: [`F64Lanes`]), and
//! the choice, made at run time, of the instructions they run as.
//!
//! Code written once over [`Lanes8`] runs as 256-bit AVX2 operations
//! ([`Avx2`], inside a function compiled for AVX2 and chosen where the CPU
//! has it: see [`Simd::detect`]) or as pairs of 128-bit operations of the
//! portable build ([`Portable`]: `wide`'s four lanes, SSE2 on x86-64,
//! NEON or scalar elsewhere). Both are the same IEEE operations in the
//! same order, so they give the same bits: no step uses an approximation
//! (`rsqrt`, which differs between CPU vendors) or a fused multiply-add.
//!
//! Where the CPU has AVX-512 ([`Simd::Avx512`]), the hottest kernels run
//! the same [`Avx2`] code compiled with AVX-512F and VL enabled as well:
//! still eight lanes, but 32 vector registers instead of 16 and mask
//! registers for the comparisons, so a joint's sixteen matrix elements
//! and their operands stay in registers instead of spilling to the stack.
//! The operations, and so the bits, are the same.
//!
//! Masks are lanes with every bit set (true) or none (false), as SIMD
//! comparisons give them.

use std::ops::{Add, Div, Mul, Neg, Sub};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};
use wide::{CmpGe, CmpGt, CmpLe, CmpLt, f32x4};

/// Eight f32 lanes (and masks of eight lanes).
pub trait Lanes8:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> + Neg<Output = Self>
{
    /// Four f64 lanes of the same instructions.
    type F64: F64Lanes;
    /// Every lane `v`.
    fn splat(v: f32) -> Self;
    /// Two blocks of four side by side (values or masks' bits).
    fn join(low: &[f32; 4], high: &[f32; 4]) -> Self;
    /// The lanes in order.
    fn to_array(self) -> [f32; 8];
    /// Square root of each lane.
    fn sqrt(self) -> Self;
    /// Absolute value of each lane.
    fn abs(self) -> Self;
    /// Masks of `self < o`, `self <= o`, `self > o`, `self >= o`.
    fn lt(self, o: Self) -> Self;
    fn le(self, o: Self) -> Self;
    fn gt(self, o: Self) -> Self;
    fn ge(self, o: Self) -> Self;
    /// For a mask: `yes` in its set lanes, `no` elsewhere.
    fn select(self, yes: Self, no: Self) -> Self;
    /// Masks' and, or, not.
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn not(self) -> Self;
    /// Whether any / every lane of a mask is set.
    fn any(self) -> bool;
    fn all(self) -> bool;
    /// Four rows transposed as two 4x4 blocks side by side: lanes 0-3 of
    /// row `i` become lane `i` of rows 0-3, lanes 4-7 likewise (four
    /// joints' quaternions to x, y, z, w lanes and back, twice over).
    fn transpose_halves(rows: [Self; 4]) -> [Self; 4];
    /// The first eight floats of `s`.
    fn load(s: &[f32]) -> Self;
    /// The lanes into the first eight floats of `s`.
    fn store(self, s: &mut [f32]);
    /// Bitwise exclusive or (bit patterns, not values: compares bits).
    fn xor(self, o: Self) -> Self;
    /// The low half into the first four floats of `s`.
    fn store_low(self, s: &mut [f32]);
    /// The high half into the first four floats of `s`.
    fn store_high(self, s: &mut [f32]);
    /// Whether any bit of the low half, and of the high half, is set.
    fn any_bit_halves(self) -> [bool; 2];
    /// The CPU's estimate of `1 / sqrt(self)` (12 bits or more): the one
    /// exception to exact operations, the same bits from both
    /// implementations on one CPU but not across CPU vendors, for code
    /// that refines it and says so (the compressed clip sampler, as
    /// ozz-animation normalises).
    fn recip_sqrt_estimate(self) -> Self;
}

/// Four f64 lanes: the exact (slerp) sampler's key ratios and sines, in
/// f64 for glTF exactness. As one 256-bit AVX register ([`Avx2F64`], in a
/// function compiled for AVX2) or as `wide`'s f64x4 (two 128-bit SSE2
/// operations in the portable build): the same IEEE operations, no fused
/// multiply-add, so the same bits.
pub trait F64Lanes:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    /// Every lane `v`.
    fn splat(v: f64) -> Self;
    /// Four f32 lanes, widened (exactly).
    fn widen(v: [f32; 4]) -> Self;
    /// Each lane rounded to the nearest f32, as `as f32` rounds.
    fn narrow(self) -> [f32; 4];
}

impl F64Lanes for wide::f64x4 {
    #[inline(always)]
    fn splat(v: f64) -> Self {
        wide::f64x4::splat(v)
    }
    #[inline(always)]
    fn widen(v: [f32; 4]) -> Self {
        wide::f64x4::from(v.map(f64::from))
    }
    #[inline(always)]
    fn narrow(self) -> [f32; 4] {
        self.to_array().map(|v| v as f32)
    }
}

/// Eight lanes as two of `wide`'s four.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Portable([f32x4; 2]);

macro_rules! pairwise {
    ($ty:ident, $trait:ident, $method:ident, $op:tt) => {
        impl $trait for $ty {
            type Output = $ty;
            #[inline(always)]
            fn $method(self, o: $ty) -> $ty {
                $ty([self.0[0] $op o.0[0], self.0[1] $op o.0[1]])
            }
        }
    };
}
pairwise!(Portable, Add, add, +);
pairwise!(Portable, Sub, sub, -);
pairwise!(Portable, Mul, mul, *);
pairwise!(Portable, Div, div, /);

impl Neg for Portable {
    type Output = Portable;
    #[inline(always)]
    fn neg(self) -> Portable {
        Portable([-self.0[0], -self.0[1]])
    }
}

impl Lanes8 for Portable {
    type F64 = wide::f64x4;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        Portable([f32x4::splat(v); 2])
    }
    #[inline(always)]
    fn join(low: &[f32; 4], high: &[f32; 4]) -> Self {
        Portable([f32x4::from(*low), f32x4::from(*high)])
    }
    #[inline(always)]
    fn to_array(self) -> [f32; 8] {
        let (l, h) = (self.0[0].to_array(), self.0[1].to_array());
        [l[0], l[1], l[2], l[3], h[0], h[1], h[2], h[3]]
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        Portable([self.0[0].sqrt(), self.0[1].sqrt()])
    }
    #[inline(always)]
    fn abs(self) -> Self {
        Portable([self.0[0].abs(), self.0[1].abs()])
    }
    #[inline(always)]
    fn lt(self, o: Self) -> Self {
        Portable([self.0[0].cmp_lt(o.0[0]), self.0[1].cmp_lt(o.0[1])])
    }
    #[inline(always)]
    fn le(self, o: Self) -> Self {
        Portable([self.0[0].cmp_le(o.0[0]), self.0[1].cmp_le(o.0[1])])
    }
    #[inline(always)]
    fn gt(self, o: Self) -> Self {
        Portable([self.0[0].cmp_gt(o.0[0]), self.0[1].cmp_gt(o.0[1])])
    }
    #[inline(always)]
    fn ge(self, o: Self) -> Self {
        Portable([self.0[0].cmp_ge(o.0[0]), self.0[1].cmp_ge(o.0[1])])
    }
    #[inline(always)]
    fn select(self, yes: Self, no: Self) -> Self {
        Portable([self.0[0].blend(yes.0[0], no.0[0]), self.0[1].blend(yes.0[1], no.0[1])])
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        Portable([self.0[0] & o.0[0], self.0[1] & o.0[1]])
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        Portable([self.0[0] | o.0[0], self.0[1] | o.0[1]])
    }
    #[inline(always)]
    fn not(self) -> Self {
        Portable([!self.0[0], !self.0[1]])
    }
    #[inline(always)]
    fn any(self) -> bool {
        (self.0[0] | self.0[1]).any()
    }
    #[inline(always)]
    fn all(self) -> bool {
        (self.0[0] & self.0[1]).all()
    }
    #[inline(always)]
    fn transpose_halves(rows: [Self; 4]) -> [Self; 4] {
        let half = |h: usize| f32x4::transpose([rows[0].0[h], rows[1].0[h], rows[2].0[h], rows[3].0[h]]);
        let (low, high) = (half(0), half(1));
        [
            Portable([low[0], high[0]]),
            Portable([low[1], high[1]]),
            Portable([low[2], high[2]]),
            Portable([low[3], high[3]]),
        ]
    }
    #[inline(always)]
    fn load(s: &[f32]) -> Self {
        let s: &[f32; 8] = s[..8].try_into().expect("eight floats");
        Portable([f32x4::from([s[0], s[1], s[2], s[3]]), f32x4::from([s[4], s[5], s[6], s[7]])])
    }
    #[inline(always)]
    fn store(self, s: &mut [f32]) {
        s[..8].copy_from_slice(&self.to_array());
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        Portable([self.0[0] ^ o.0[0], self.0[1] ^ o.0[1]])
    }
    #[inline(always)]
    fn store_low(self, s: &mut [f32]) {
        s[..4].copy_from_slice(&self.0[0].to_array());
    }
    #[inline(always)]
    fn store_high(self, s: &mut [f32]) {
        s[..4].copy_from_slice(&self.0[1].to_array());
    }
    #[inline(always)]
    fn any_bit_halves(self) -> [bool; 2] {
        self.0.map(|half| half.to_array().iter().any(|v| v.to_bits() != 0))
    }
    #[inline(always)]
    fn recip_sqrt_estimate(self) -> Self {
        Portable([self.0[0].recip_sqrt(), self.0[1].recip_sqrt()])
    }
}

#[cfg(target_arch = "x86_64")]
pub use avx2::{Avx2, Avx2F64};

#[cfg(target_arch = "x86_64")]
mod avx2 {
    //! AVX2's eight lanes. Every method is inlined into a function compiled
    //! for AVX2 (see [`Simd`](super::Simd)), where the intrinsics are
    //! single instructions; only such a function may use this type.
    use super::Lanes8;
    use std::arch::x86_64::*;
    use std::ops::{Add, Div, Mul, Neg, Sub};

    /// Eight lanes in one AVX register.
    #[derive(Debug, Clone, Copy)]
    pub struct Avx2(pub(crate) __m256);

    /// Four f64 lanes in one AVX register.
    #[derive(Debug, Clone, Copy)]
    pub struct Avx2F64(__m256d);

    // SAFETY (every `unsafe` below): only run where the CPU has AVX2; loads
    // and stores go through references to arrays of the right size.
    impl super::F64Lanes for Avx2F64 {
        #[inline(always)]
        fn splat(v: f64) -> Self {
            Avx2F64(unsafe { _mm256_set1_pd(v) })
        }
        #[inline(always)]
        fn widen(v: [f32; 4]) -> Self {
            Avx2F64(unsafe { _mm256_cvtps_pd(_mm_loadu_ps(v.as_ptr())) })
        }
        #[inline(always)]
        fn narrow(self) -> [f32; 4] {
            let mut out = [0.0; 4];
            // Rounds to nearest, ties to even (MXCSR's default, which Rust keeps).
            unsafe { _mm_storeu_ps(out.as_mut_ptr(), _mm256_cvtpd_ps(self.0)) };
            out
        }
    }

    /// `impl Trait for Type` by one AVX intrinsic over both registers.
    macro_rules! binary {
        ($ty:ident, $trait:ident, $method:ident, $intrinsic:ident) => {
            impl $trait for $ty {
                type Output = $ty;
                #[inline(always)]
                fn $method(self, o: $ty) -> $ty {
                    // SAFETY: only run where the CPU has AVX2 (see the module).
                    $ty(unsafe { $intrinsic(self.0, o.0) })
                }
            }
        };
    }
    binary!(Avx2, Add, add, _mm256_add_ps);
    binary!(Avx2, Sub, sub, _mm256_sub_ps);
    binary!(Avx2, Mul, mul, _mm256_mul_ps);
    binary!(Avx2, Div, div, _mm256_div_ps);
    binary!(Avx2F64, Add, add, _mm256_add_pd);
    binary!(Avx2F64, Sub, sub, _mm256_sub_pd);
    binary!(Avx2F64, Mul, mul, _mm256_mul_pd);
    binary!(Avx2F64, Div, div, _mm256_div_pd);

    impl Neg for Avx2 {
        type Output = Avx2;
        #[inline(always)]
        fn neg(self) -> Avx2 {
            // SAFETY: as above. Flipping the sign bit is what `-x` does.
            Avx2(unsafe { _mm256_xor_ps(self.0, _mm256_set1_ps(-0.0)) })
        }
    }

    // SAFETY (every `unsafe` below): only run where the CPU has AVX2; loads
    // and stores go through references to arrays of the right size.
    impl Lanes8 for Avx2 {
        type F64 = Avx2F64;
        #[inline(always)]
        fn splat(v: f32) -> Self {
            Avx2(unsafe { _mm256_set1_ps(v) })
        }
        #[inline(always)]
        fn join(low: &[f32; 4], high: &[f32; 4]) -> Self {
            Avx2(unsafe { _mm256_set_m128(_mm_loadu_ps(high.as_ptr()), _mm_loadu_ps(low.as_ptr())) })
        }
        #[inline(always)]
        fn to_array(self) -> [f32; 8] {
            let mut out = [0.0; 8];
            unsafe { _mm256_storeu_ps(out.as_mut_ptr(), self.0) };
            out
        }
        #[inline(always)]
        fn sqrt(self) -> Self {
            Avx2(unsafe { _mm256_sqrt_ps(self.0) })
        }
        #[inline(always)]
        fn abs(self) -> Self {
            Avx2(unsafe { _mm256_andnot_ps(_mm256_set1_ps(-0.0), self.0) })
        }
        #[inline(always)]
        fn lt(self, o: Self) -> Self {
            Avx2(unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(self.0, o.0) })
        }
        #[inline(always)]
        fn le(self, o: Self) -> Self {
            Avx2(unsafe { _mm256_cmp_ps::<_CMP_LE_OQ>(self.0, o.0) })
        }
        #[inline(always)]
        fn gt(self, o: Self) -> Self {
            Avx2(unsafe { _mm256_cmp_ps::<_CMP_GT_OQ>(self.0, o.0) })
        }
        #[inline(always)]
        fn ge(self, o: Self) -> Self {
            Avx2(unsafe { _mm256_cmp_ps::<_CMP_GE_OQ>(self.0, o.0) })
        }
        #[inline(always)]
        fn select(self, yes: Self, no: Self) -> Self {
            Avx2(unsafe { _mm256_blendv_ps(no.0, yes.0, self.0) })
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            Avx2(unsafe { _mm256_and_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn or(self, o: Self) -> Self {
            Avx2(unsafe { _mm256_or_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn not(self) -> Self {
            Avx2(unsafe { _mm256_xor_ps(self.0, _mm256_castsi256_ps(_mm256_set1_epi32(-1))) })
        }
        #[inline(always)]
        fn any(self) -> bool {
            unsafe { _mm256_movemask_ps(self.0) != 0 }
        }
        #[inline(always)]
        fn all(self) -> bool {
            unsafe { _mm256_movemask_ps(self.0) == 0xff }
        }
        #[inline(always)]
        fn transpose_halves([a, b, c, d]: [Self; 4]) -> [Self; 4] {
            unsafe {
                // [a0 b0 a1 b1], [c0 d0 c1 d1], [a2 b2 a3 b3], [c2 d2 c3 d3] in each half,
                let (ab01, cd01) = (_mm256_unpacklo_ps(a.0, b.0), _mm256_unpacklo_ps(c.0, d.0));
                let (ab23, cd23) = (_mm256_unpackhi_ps(a.0, b.0), _mm256_unpackhi_ps(c.0, d.0));
                // then their low and high pairs side by side.
                [
                    Avx2(_mm256_shuffle_ps::<0b01_00_01_00>(ab01, cd01)),
                    Avx2(_mm256_shuffle_ps::<0b11_10_11_10>(ab01, cd01)),
                    Avx2(_mm256_shuffle_ps::<0b01_00_01_00>(ab23, cd23)),
                    Avx2(_mm256_shuffle_ps::<0b11_10_11_10>(ab23, cd23)),
                ]
            }
        }
        #[inline(always)]
        fn load(s: &[f32]) -> Self {
            let s: &[f32; 8] = s[..8].try_into().expect("eight floats");
            Avx2(unsafe { _mm256_loadu_ps(s.as_ptr()) })
        }
        #[inline(always)]
        fn store(self, s: &mut [f32]) {
            let s: &mut [f32; 8] = (&mut s[..8]).try_into().expect("eight floats");
            unsafe { _mm256_storeu_ps(s.as_mut_ptr(), self.0) }
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            Avx2(unsafe { _mm256_xor_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn store_low(self, s: &mut [f32]) {
            let s: &mut [f32; 4] = (&mut s[..4]).try_into().expect("four floats");
            unsafe { _mm_storeu_ps(s.as_mut_ptr(), _mm256_castps256_ps128(self.0)) }
        }
        #[inline(always)]
        fn store_high(self, s: &mut [f32]) {
            let s: &mut [f32; 4] = (&mut s[..4]).try_into().expect("four floats");
            unsafe { _mm_storeu_ps(s.as_mut_ptr(), _mm256_extractf128_ps::<1>(self.0)) }
        }
        #[inline(always)]
        fn any_bit_halves(self) -> [bool; 2] {
            unsafe {
                let (low, high) = (_mm256_castps256_ps128(self.0), _mm256_extractf128_ps::<1>(self.0));
                let (low, high) = (_mm_castps_si128(low), _mm_castps_si128(high));
                [_mm_testz_si128(low, low) == 0, _mm_testz_si128(high, high) == 0]
            }
        }
        #[inline(always)]
        fn recip_sqrt_estimate(self) -> Self {
            Avx2(unsafe { _mm256_rsqrt_ps(self.0) })
        }
    }
}

/// The instructions eight-lane code runs as on this CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Simd {
    /// [`Avx2`](Simd::Avx2)'s operations compiled with AVX-512F and VL as
    /// well (32 vector registers and mask registers, the same bits) in the
    /// kernels measured faster so: a crowd batch's model matrices and
    /// palettes, blends of three poses or more, the additive layer.
    /// Elsewhere the same as `Avx2`.
    Avx512,
    /// 256-bit AVX2 operations (with FMA available, never formed).
    Avx2,
    /// What the binary was built for (two 128-bit operations per step on x86-64).
    Portable,
}

/// `Simd::set_override`'s choice: none, portable, AVX2, AVX-512 (each
/// only where the CPU has it).
static OVERRIDE: AtomicU8 = AtomicU8::new(0);

impl Simd {
    /// The widest this CPU runs: AVX-512 where it has it, else AVX2, else
    /// portable (chosen once per process: every job asks); or at most what
    /// [`set_override`](Self::set_override) or `VKSKIN_SIMD` (`portable`,
    /// `avx2`) asks for, to compare them.
    #[inline]
    pub fn detect() -> Self {
        static CHOSEN: OnceLock<Simd> = OnceLock::new();
        match OVERRIDE.load(Ordering::Relaxed) {
            0 => *CHOSEN.get_or_init(|| {
                Self::widest_up_to(match std::env::var("VKSKIN_SIMD").as_deref() {
                    Ok("portable") => 1,
                    Ok("avx2") => 2,
                    _ => 0,
                })
            }),
            code => Self::widest_up_to(code),
        }
    }

    /// The widest way this CPU runs up to the one `code` names (0: no
    /// limit, 1: portable, 2: AVX2, 3: AVX-512).
    fn widest_up_to(code: u8) -> Self {
        match code {
            0 | 3 if Self::avx512_available() => Simd::Avx512,
            0 | 2 | 3 if Self::avx2_available() => Simd::Avx2,
            _ => Simd::Portable,
        }
    }

    /// Makes every later [`detect`](Self::detect) in this process give
    /// `simd` (or the widest below it that the CPU has), or the CPU's own
    /// choice again for `None`: benchmarks time the ways in one run.
    pub fn set_override(simd: Option<Simd>) {
        let code = match simd {
            None => 0,
            Some(Simd::Portable) => 1,
            Some(Simd::Avx2) => 2,
            Some(Simd::Avx512) => 3,
        };
        OVERRIDE.store(code, Ordering::Relaxed);
    }

    /// A short name: `avx512`, `avx2` or `portable`.
    pub fn name(self) -> &'static str {
        match self {
            Simd::Avx512 => "avx512",
            Simd::Avx2 => "avx2",
            Simd::Portable => "portable",
        }
    }

    /// Every way this CPU runs, widest first (what tests compare).
    pub fn available() -> Vec<Simd> {
        let mut ways = [3, 2, 1].map(Self::widest_up_to).to_vec();
        ways.dedup();
        ways
    }

    /// Whether this CPU runs AVX-512F and VL besides AVX2 and FMA.
    #[inline]
    pub fn avx512_available() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            Self::avx2_available()
                && std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512vl")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// Whether this CPU runs AVX2 and FMA.
    #[inline]
    pub fn avx2_available() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What every implementation must give for these lanes.
    fn check<L: Lanes8>() {
        let a = L::join(&[1.0, -0.0, f32::NAN, 3.0], &[f32::INFINITY, -2.0, 0.5, 0.0]);
        let zero = L::splat(0.0);
        let set = |m: L| m.to_array().map(|x| x.to_bits() != 0);
        assert_eq!(set(a.lt(zero)), [false, false, false, false, false, true, false, false]);
        assert_eq!(set(a.ge(zero)), [true, true, false, true, true, false, true, true]);
        assert_eq!(set(a.gt(zero).not()), [false, true, true, false, false, true, false, true]);
        let picked = a.gt(zero).select(a, L::splat(9.0)).to_array();
        assert_eq!(picked[..4], [1.0, 9.0, 9.0, 3.0]);
        assert_eq!((-a).abs().to_array()[1].to_bits(), 0);
        assert!(a.le(zero).any() && !a.le(zero).all() && a.le(zero).or(a.le(zero).not()).all());
        assert!(!a.le(zero).and(a.gt(zero)).any());
        let root = (L::splat(4.0) / L::splat(2.0)).sqrt().to_array();
        assert_eq!(root, [2.0_f32.sqrt(); 8]);
        assert_eq!((L::splat(1.5) * L::splat(2.0) - L::splat(1.0) + L::splat(0.5)).to_array(), [2.5; 8]);
        let rows: [L; 4] = std::array::from_fn(|r| {
            let lane = |c: usize| (r * 8 + c) as f32;
            L::join(&[lane(0), lane(1), lane(2), lane(3)], &[lane(4), lane(5), lane(6), lane(7)])
        });
        let columns = L::transpose_halves(rows).map(L::to_array);
        for (r, row) in columns.iter().enumerate() {
            let expected: [f32; 8] = std::array::from_fn(|c| (c % 4 * 8 + r + c / 4 * 4) as f32);
            assert_eq!(*row, expected, "row {r}");
        }
        assert_eq!(L::transpose_halves(L::transpose_halves(rows)).map(L::to_array), rows.map(L::to_array));
        let floats: Vec<f32> = (0..64).map(|v| v as f32).collect();
        let mut out = [0.0; 8];
        L::load(&floats[8..]).store(&mut out);
        assert_eq!(out, std::array::from_fn(|i| (i + 8) as f32));
        let zero = L::splat(0.0);
        assert_eq!(L::splat(-0.0).xor(zero).any_bit_halves(), [true, true]);
        assert_eq!(a.xor(a).any_bit_halves(), [false, false]);
        let halves = L::join(&[4.0, 5.0, 6.0, 7.0], &[60.0, 61.0, 62.0, 63.0]);
        assert_eq!(halves.to_array(), [4.0, 5.0, 6.0, 7.0, 60.0, 61.0, 62.0, 63.0]);
        let (mut low, mut high) = ([0.0; 4], [0.0; 4]);
        halves.store_low(&mut low);
        halves.store_high(&mut high);
        assert_eq!((low, high), ([4.0, 5.0, 6.0, 7.0], [60.0, 61.0, 62.0, 63.0]));
        let low_sign = L::join(&[0.0, -0.0, 0.0, 0.0], &[0.0; 4]);
        assert_eq!(low_sign.any_bit_halves(), [true, false]);
        assert_eq!(L::splat(0.0).any_bit_halves(), [false, false]);
    }

    #[test]
    fn both_implementations_follow_ieee() {
        check::<Portable>();
        #[cfg(target_arch = "x86_64")]
        if Simd::avx2_available() {
            #[target_feature(enable = "avx2,fma")]
            fn with_avx2() {
                check::<Avx2>();
            }
            // SAFETY: the CPU has AVX2 and FMA.
            unsafe { with_avx2() };
        }
        #[cfg(target_arch = "x86_64")]
        if Simd::avx512_available() {
            #[target_feature(enable = "avx2,fma,avx512f,avx512vl")]
            fn with_avx512() {
                check::<Avx2>();
            }
            // SAFETY: the CPU has AVX-512F and VL, AVX2 and FMA.
            unsafe { with_avx512() };
        }
    }

    /// A limit gives the widest way at or below it, never one the CPU
    /// lacks; no limit gives the widest there is.
    #[test]
    fn the_choice_is_the_widest_the_cpu_has_within_the_limit() {
        let available = Simd::available();
        assert_eq!(available.last(), Some(&Simd::Portable));
        assert_eq!(Simd::widest_up_to(0), available[0]);
        assert_eq!(Simd::widest_up_to(3), available[0]);
        assert_eq!(Simd::widest_up_to(1), Simd::Portable);
        let avx2 = if Simd::avx2_available() { Simd::Avx2 } else { Simd::Portable };
        assert_eq!(Simd::widest_up_to(2), avx2);
        assert_eq!(available.contains(&Simd::Avx512), Simd::avx512_available());
    }

    /// The estimates of eight spread values.
    fn estimates<L: Lanes8>() -> [f32; 8] {
        L::join(&[1.0, 0.25, 0.7, 1.3], &[1e-3, 3.9e4, 0.999_999, 2.0]).recip_sqrt_estimate().to_array()
    }

    #[test]
    fn the_square_root_estimate_is_close_and_the_same_from_both() {
        let values = [1.0f32, 0.25, 0.7, 1.3, 1e-3, 3.9e4, 0.999_999, 2.0];
        let portable = estimates::<Portable>();
        for (v, e) in values.iter().zip(portable) {
            let exact = 1.0 / f64::from(*v).sqrt();
            assert!((f64::from(e) - exact).abs() <= exact * 1.5 / 4096.0, "{v}: {e} vs {exact}");
        }
        #[cfg(target_arch = "x86_64")]
        if Simd::avx2_available() {
            #[target_feature(enable = "avx2,fma")]
            fn with_avx2() -> [f32; 8] {
                estimates::<Avx2>()
            }
            // SAFETY: the CPU has AVX2 and FMA.
            let avx2 = unsafe { with_avx2() };
            assert_eq!(avx2.map(f32::to_bits), portable.map(f32::to_bits));
        }
    }
}
