/* Generator of tests/data/fp8_cuda_reference.npz: CUDA's own fp8 conversions, run on the host.

cuda_fp8.hpp's conversions are __host__ __device__; compiled for the host they take the
header's software path, which is what cubepy.fp8 must match bit for bit. No GPU is needed
and no kernel is launched. Regenerate with (needs nvcc; writes the .npz):

    python tests/test_fp8_host.py --regenerate

which runs `nvcc -x cu tests/data/fp8_cuda_reference.cu -o <tmp>/gen` and `<tmp>/gen OUT.bin`,
then packs OUT.bin. OUT.bin holds, little-endian, each array preceded by its uint32 length:
  float32 inputs, their __nv_cvt_float_to_fp8(x, __NV_SATFINITE, E4M3) and (.., E5M2) codes,
  float64 inputs (no NaN), their __nv_cvt_double_to_fp8(x, __NV_SATFINITE, E4M3) and E5M2 codes,
  float32 value of each of the 256 codes through __nv_cvt_fp8_to_halfraw, for E4M3 and E5M2.
The float32 inputs: every float16 bit pattern; for each format every finite value, the
midpoints between neighbours and one float32 ulp either side of both; saturation edges;
NaNs, infinities, float32 subnormals; pseudo-random values (fixed LCG seed).
*/
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

static float from_bits(uint32_t b) { float f; std::memcpy(&f, &b, 4); return f; }

static uint32_t lcg_state = 12345u;
static uint32_t lcg() { lcg_state = lcg_state * 1664525u + 1013904223u; return lcg_state; }

static float decode(unsigned char c, __nv_fp8_interpretation_t fmt) {
    return __half2float(__half(__nv_cvt_fp8_to_halfraw(c, fmt)));
}

template <typename T> static void put(FILE *f, const std::vector<T> &v) {
    uint32_t n = (uint32_t)v.size();
    std::fwrite(&n, 4, 1, f);
    std::fwrite(v.data(), sizeof(T), v.size(), f);
}

int main(int argc, char **argv) {
    if (argc != 2) { std::fprintf(stderr, "usage: %s OUT.bin\n", argv[0]); return 2; }
    const __nv_fp8_interpretation_t fmts[2] = {__NV_E4M3, __NV_E5M2};
    std::vector<float> xs;
    std::vector<double> ds;

    for (uint32_t h = 0; h < 65536; ++h) {
        __half_raw r; r.x = (unsigned short)h;
        xs.push_back(__half2float(__half(r)));
    }
    for (__nv_fp8_interpretation_t fmt : fmts) {
        // Finite values in increasing order: negative codes descending, then positive ones.
        std::vector<float> vals;
        for (int c = 0xFF; c >= 0x80; --c) if (std::isfinite(decode(c, fmt))) vals.push_back(decode(c, fmt));
        for (int c = 0; c < 0x80; ++c) if (std::isfinite(decode(c, fmt))) vals.push_back(decode(c, fmt));
        for (size_t i = 0; i < vals.size(); ++i) {
            float v = vals[i];
            xs.push_back(v); xs.push_back(std::nextafterf(v, -INFINITY));
            xs.push_back(std::nextafterf(v, INFINITY));
            if (i + 1 < vals.size()) {
                double mid = 0.5 * ((double)v + (double)vals[i + 1]);  // exact in float too
                float m = (float)mid;
                xs.push_back(m); xs.push_back(std::nextafterf(m, -INFINITY));
                xs.push_back(std::nextafterf(m, INFINITY));
                // Doubles a hair off the midpoint: rounded once, they leave the tie.
                ds.push_back(mid); ds.push_back(mid + std::ldexp(std::fabs(mid), -40));
                ds.push_back(mid - std::ldexp(std::fabs(mid), -40));
            }
        }
        // Beyond the largest finite: its (virtual) next step, the midpoint, the overflow
        // threshold the header uses, and their neighbours.
        float mx = vals.back(), ulp = mx - vals[vals.size() - 2];
        const float edges[] = {mx + ulp / 2, mx + ulp, 2 * mx, mx + ulp / 4, mx + 3 * ulp / 4};
        for (float e : edges) {
            for (float s : {1.0f, -1.0f}) {
                xs.push_back(s * e); xs.push_back(std::nextafterf(s * e, -INFINITY));
                xs.push_back(std::nextafterf(s * e, INFINITY));
                ds.push_back(s * (double)e); ds.push_back(s * std::nextafter((double)e, 0.0));
                ds.push_back(s * std::nextafter((double)e, INFINITY));
            }
        }
    }
    const uint32_t specials[] = {
        0x7F800000u, 0xFF800000u, 0x7F7FFFFFu, 0xFF7FFFFFu,              // +-inf, +-FLT_MAX
        0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0xFFFFFFFFu,
        0x7FA00000u, 0x7FD00000u, 0x7FE00000u, 0xFFA00000u,              // NaN payloads
        0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu, 0x00800000u, 0x80800000u,
        0x00000000u, 0x80000000u};
    for (uint32_t b : specials) xs.push_back(from_bits(b));
    for (int i = 0; i < 4096; ++i) xs.push_back(from_bits(lcg()));  // any bit pattern
    for (int i = 0; i < 8192; ++i) {
        // Exponents 2^-20 .. 2^17: the fp8 ranges and a little beyond, random mantissa.
        uint32_t b = (lcg() & 0x807FFFFFu) | ((107u + lcg() % 38u) << 23);
        xs.push_back(from_bits(b));
        uint64_t hi = lcg(), lo = lcg();
        double d = std::ldexp(1.0 + (double)((hi << 20) ^ lo) * 0x1p-52, (int)(lcg() % 38u) - 20);
        ds.push_back((lcg() & 1u) ? -d : d);
    }
    const double dspecials[] = {INFINITY, -INFINITY, 1e300, -1e300, 5e-324, -5e-324, 0.0, -0.0};
    for (double d : dspecials) ds.push_back(d);

    FILE *f = std::fopen(argv[1], "wb");
    if (!f) { std::perror(argv[1]); return 1; }
    put(f, xs);
    for (__nv_fp8_interpretation_t fmt : fmts) {
        std::vector<unsigned char> out;
        for (float x : xs) out.push_back(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, fmt));
        put(f, out);
    }
    put(f, ds);
    for (__nv_fp8_interpretation_t fmt : fmts) {
        std::vector<unsigned char> out;
        for (double d : ds) out.push_back(__nv_cvt_double_to_fp8(d, __NV_SATFINITE, fmt));
        put(f, out);
    }
    for (__nv_fp8_interpretation_t fmt : fmts) {
        std::vector<float> table;
        for (int c = 0; c < 256; ++c) table.push_back(decode((unsigned char)c, fmt));
        put(f, table);
    }
    return std::fclose(f) == 0 ? 0 : 1;
}
