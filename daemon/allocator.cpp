// How emqd's allocator (jemalloc, linked by daemon/CMakeLists.txt) is tuned.
//
// Every slot thread keeps its own cache of freed blocks. With 64 slots on
// each of 10 queues, jemalloc's default cache sizes let the resident set
// climb by 7 % over a million jobs after the first 100 000 (bench/run
// memory); caches of 20 small and 4 large blocks keep it flat, and still
// leave a no-op job 20 % fewer instructions than glibc malloc (callgrind).
// MALLOC_CONF in the environment is read after this, so it still wins.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "tcache_nslots_small_max:20,tcache_nslots_large:4";
}
