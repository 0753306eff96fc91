/* An emqd plugin that does real work: the SHA-256 of the payload (FIPS
 * 180-4), as 64 lower-case hex digits. Self-contained (no OpenSSL), and
 * safe from any number of threads at once: all its state is on the stack.
 *
 *   queues:
 *     - name: digest
 *       concurrency: 8
 *       handler: { type: plugin, path: /usr/lib/echomq/plugins/libemq_sha256.so }
 *
 *   emq enqueue digest abc    ->  result ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
 */
#include <echomq/plugin.h>

#include <stdint.h>
#include <string.h>

typedef struct {
  uint32_t h[8];
  uint64_t length; /* bytes hashed so far */
  unsigned char block[64];
  size_t used; /* bytes in block */
} sha256_ctx;

static const uint32_t k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(sha256_ctx* c, const unsigned char* p) {
  uint32_t w[64];
  uint32_t a, b, d, e, f, g, h, cc;
  unsigned i;
  for (i = 0; i < 16; ++i) {
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  }
  for (i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
  for (i = 0; i < 64; ++i) {
    uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
    h = g, g = f, f = e, e = d + t1, d = cc, cc = b, b = a, a = t1 + t2;
  }
  c->h[0] += a, c->h[1] += b, c->h[2] += cc, c->h[3] += d;
  c->h[4] += e, c->h[5] += f, c->h[6] += g, c->h[7] += h;
}

static void sha256_init(sha256_ctx* c) {
  static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->h, h0, sizeof h0);
  c->length = 0;
  c->used = 0;
}

static void sha256_update(sha256_ctx* c, const unsigned char* p, size_t n) {
  c->length += n;
  while (n > 0) {
    size_t take = 64 - c->used < n ? 64 - c->used : n;
    memcpy(c->block + c->used, p, take);
    c->used += take, p += take, n -= take;
    if (c->used == 64) {
      sha256_block(c, c->block);
      c->used = 0;
    }
  }
}

static void sha256_final(sha256_ctx* c, unsigned char digest[32]) {
  const uint64_t bits = c->length * 8;
  unsigned char pad[72] = {0x80};
  /* 0x80, zeros to 56 mod 64, then the length in bits, big-endian. */
  size_t pad_len = (c->used < 56 ? 56 : 120) - c->used;
  unsigned i;
  for (i = 0; i < 8; ++i) pad[pad_len + i] = (unsigned char)(bits >> (56 - 8 * i));
  sha256_update(c, pad, pad_len + 8);
  for (i = 0; i < 8; ++i) {
    digest[4 * i] = (unsigned char)(c->h[i] >> 24);
    digest[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
    digest[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
    digest[4 * i + 3] = (unsigned char)c->h[i];
  }
}

static char no_state;

EMQ_PLUGIN_EXPORT int emq_plugin_abi_version(void) { return EMQ_PLUGIN_ABI_VERSION; }

EMQ_PLUGIN_EXPORT void* emq_plugin_create(const char* config_json, size_t config_len, char* err, size_t err_len) {
  (void)config_json;
  (void)config_len;
  (void)err;
  (void)err_len;
  return &no_state;
}

EMQ_PLUGIN_EXPORT int emq_plugin_handle(void* state, const emq_job* job, emq_result* out) {
  static const char hex[] = "0123456789abcdef";
  sha256_ctx c;
  unsigned char digest[32];
  char text[64];
  unsigned i;
  (void)state;
  sha256_init(&c);
  sha256_update(&c, job->payload, job->payload_len);
  sha256_final(&c, digest);
  for (i = 0; i < 32; ++i) {
    text[2 * i] = hex[digest[i] >> 4];
    text[2 * i + 1] = hex[digest[i] & 0x0f];
  }
  if (out->write_result(out->ctx, text, sizeof text) != 0) {
    static const char why[] = "the 64-byte digest does not fit max_output_bytes";
    out->write_error(out->ctx, why, sizeof why - 1);
    return EMQ_PLUGIN_RETRY;
  }
  return EMQ_PLUGIN_OK;
}

EMQ_PLUGIN_EXPORT void emq_plugin_destroy(void* state) { (void)state; }
