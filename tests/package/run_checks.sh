# tests/package/check.sh, part 2 (sourced): the packaged programs at work.
# The root's valkey-server (bookworm-backports, the package's Recommends)
# loads the module from its packaged path; the packaged emqd, as nobody,
# runs jobs that the packaged emq, the wheel and the tarball enqueue.

step "valkey-server with --loadmodule /usr/lib/echomq/emq.so, in the root"
vport=
cli() { in_root valkey-cli -p "$vport" "$@"; }
start_valkey "$work/valkey.log" /tmp /usr/lib/echomq/emq.so in_root
modules=$(cli MODULE LIST | paste -sd ' ')
[[ "$modules" == "name emq ver $module_version path /usr/lib/echomq/emq.so "* ]] ||
  fail "MODULE LIST says '$modules', want emq at ver $module_version (VERSION $version) from /usr/lib/echomq/emq.so"
ok "MODULE LIST: $modules"

step "the packaged emqd runs jobs"
# The operator's edit: this server, metrics off, and the queues of this test.
cat >"$root/etc/echomq/emqd.yaml" <<EOF
# edited by package-test: an upgrade must keep this file as it is
valkey:
  url: valkey://127.0.0.1:$vport/0
metrics:
  listen: ""
queues:
  - name: pkg-upper
    keep_completed_s: 3600
    handler:
      type: exec
      command: ["tr", "a-z", "A-Z"]
EOF
cp "$root/etc/echomq/emqd.yaml" "$work/edited.yaml"
out=$(as_nobody emqd --check-config --config /etc/echomq/emqd.yaml 2>&1) || fail "the edited config: $out"
env -i PATH="$root_path" chroot --userspec=nobody:nogroup "$root" emqd --config /etc/echomq/emqd.yaml \
  >"$work/emqd.log" 2>&1 &
emqd_pid=$!
emqd_log() { tail -n 20 "$work/emqd.log"; }
wait_for 30 grep -q 'executor native' "$work/emqd.log" ||
  fail "emqd did not come up on the packaged module (no 'executor native' in its log): $(emqd_log)"
ok "emqd runs the core transitions in the packaged module (executor native)"
emq() { in_root env EMQ_URL="valkey://127.0.0.1:$vport/0" emq "$@"; }
id=$(echo "from the packaged emq" | emq enqueue pkg-upper -) || fail "emq enqueue: $id"
r=$(emq wait pkg-upper "$id" --timeout 30) || fail "emq wait $id: $r; emqd's log: $(emqd_log)"
[ "$r" = "FROM THE PACKAGED EMQ" ] || fail "the job's result is '$r'"
ok "emq enqueue + emq wait, run by emqd: $r"

# A speaker's producer prints where it read the scripts from, then the
# job's result: the result must be WANT and the scripts lua/, byte for byte.
check_speaker() { # WHAT OUTPUT WANT
  local dir result
  dir=$(head -n 1 <<<"$2")
  result=$(tail -n 1 <<<"$2")
  [ "$result" = "$3" ] || fail "the job from $1 returned '$2'"
  diff -r lua "$dir" >/dev/null || fail "the scripts of $1 ($dir) are not lua/ byte for byte: $(diff -rq lua "$dir")"
  ok "echomq $version from $1 enqueued and waited: $result; its scripts ($dir) are lua/"
}

step "the wheel and the tarball, installed as docs/clients.md says (## From the packages)"
mkdir "$work/blocks"
page_blocks docs/clients.md "## From the packages" "$work/blocks"
[ "$(ls "$work/blocks" | wc -l)" = 2 ] ||
  fail "docs/clients.md has $(ls "$work/blocks" | wc -l) sh blocks under '## From the packages', want 2 (the wheel, the tarball)"
py_block=$(grep -l 'pip install' "$work"/blocks/*.sh) || fail "no block of docs/clients.md installs the wheel with pip"
node_block=$(grep -l 'npm install' "$work"/blocks/*.sh) || fail "no block of docs/clients.md installs the tarball with npm"
# The wheel: a fresh venv that sees Debian's python3-redis, nothing fetched.
run_page_block "$py_block" "$work/empty-py" "$wheel"
[ -x "$work/empty-py/.venv/bin/python" ] || fail "the wheel's block made no .venv in $work/empty-py"
r=$(cd "$work/empty-py" && .venv/bin/python - "$vport" "$version" <<'EOF'
import importlib.metadata, os, sys
import echomq
from echomq import Queue, scripts
port, version = sys.argv[1], sys.argv[2]
assert importlib.metadata.version("echomq") == version, importlib.metadata.version("echomq")
assert scripts.lua_dir().startswith(sys.prefix), scripts.lua_dir()
print(scripts.lua_dir())
q = Queue(f"valkey://127.0.0.1:{port}/0", "pkg-upper")
print(q.wait(q.enqueue(b"from the wheel"), timeout=30).decode())
EOF
) || fail "the wheel's producer: $r; emqd's log: $(emqd_log)"
check_speaker "the wheel" "$r" "FROM THE WHEEL"

# The tarball: an empty folder; npm fetches ioredis.
run_page_block "$node_block" "$work/empty-node" "$tarball"
r=$(cd "$work/empty-node" && node - "$vport" "$version" <<'EOF'
const assert = require('node:assert');
const [port, version] = process.argv.slice(2);
const { Queue } = require('echomq');
assert.strictEqual(require('echomq/package.json').version, version);
const dir = require('echomq/lib/scripts').luaDir();
assert.ok(dir.startsWith(process.cwd()), dir);
(async () => {
  const q = new Queue(`valkey://127.0.0.1:${port}/0`, 'pkg-upper');
  const result = await q.wait(await q.enqueue('from the tarball'), 30000);
  await q.close();
  console.log(dir);
  console.log(result.toString());
})().catch((e) => { console.error(e); process.exit(1); });
EOF
) || fail "the tarball's producer: $r; emqd's log: $(emqd_log)"
check_speaker "the tarball" "$r" "FROM THE TARBALL"

stop_emqd 40
ok "emqd drained and exited 0 on SIGTERM"
