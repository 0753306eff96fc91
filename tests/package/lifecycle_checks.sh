# tests/package/check.sh, part 3 (sourced): upgrade, remove, purge, and
# what each asks of systemd (tests/package/lib.sh, recorder_systemctl).

step "upgrade to $(basename "$deb2")"
cp "$deb2" "$root/tmp/"
systemd_requests >/dev/null
# stdin closed: a conffile question would fail the upgrade, not hang it.
in_root apt-get install -y -q "/tmp/$(basename "$deb2")" </dev/null >"$work/upgrade.log" 2>&1 ||
  fail "the upgrade failed: $(tail -n 15 "$work/upgrade.log")"
[ "$(in_root dpkg-query -W -f '${Version}' emqd)" = "$version+b1" ] || fail "emqd is not at $version+b1 after the upgrade"
cmp -s "$work/edited.yaml" "$root/etc/echomq/emqd.yaml" ||
  fail "the upgrade changed the edited /etc/echomq/emqd.yaml: $(diff "$work/edited.yaml" "$root/etc/echomq/emqd.yaml")"
leftovers=$(find "$root/etc/echomq" -name '*.dpkg-*' | sed "s#^$root##")
[ -z "$leftovers" ] || fail "the upgrade left $leftovers beside the edited configuration"
requests=$(systemd_requests)
grep -qx 'try-restart emqd.service' <<<"$requests" ||
  fail "the upgrade did not try-restart emqd.service; systemd was asked: '$requests'"
grep -q 'try-restart emqd@\*.service' <<<"$requests" ||
  fail "the upgrade did not try-restart the emqd@ instances; systemd was asked: '$requests'"
if grep -Eq '(^| )(start|stop|restart)( |$)' <<<"$requests"; then
  fail "the upgrade asked systemd for more than a try-restart: $requests"
fi
out=$(as_nobody emqd --check-config --config /etc/echomq/emqd.yaml 2>&1) || fail "the kept config after the upgrade: $out"
ok "upgraded to $version+b1: the edited configuration kept as it was, running units restarted ($(tr '\n' ';' <<<"$requests"))"

step "apt-get remove emqd"
# What emqd.service keeps under DynamicUser=, as systemd would have made it.
mkdir -p "$root/var/lib/private/emqd"
echo aof >"$root/var/lib/private/emqd/appendonly.aof"
ln -s private/emqd "$root/var/lib/emqd"
in_root apt-get remove -y -q emqd </dev/null >"$work/remove.log" 2>&1 || fail "remove failed: $(tail -n 10 "$work/remove.log")"
[ ! -e "$root/usr/bin/emqd" ] || fail "/usr/bin/emqd is still there after remove"
[ "$(in_root dpkg-query -W -f '${db:Status-Abbrev}' emqd)" = "rc " ] || fail "emqd is not removed-with-config after remove"
cmp -s "$work/edited.yaml" "$root/etc/echomq/emqd.yaml" || fail "remove did not keep /etc/echomq/emqd.yaml as it was"
[ -e "$root/var/lib/private/emqd/appendonly.aof" ] || fail "remove deleted emqd's state"
requests=$(systemd_requests)
grep -q 'stop emqd.service emqd@\*.service' <<<"$requests" ||
  fail "remove did not stop emqd.service and its instances; systemd was asked: '$requests'"
ok "removed: the configuration and the state kept, the units stopped ($(tr '\n' ';' <<<"$requests"))"

step "apt-get purge emqd"
in_root apt-get purge -y -q emqd </dev/null >"$work/purge.log" 2>&1 || fail "purge failed: $(tail -n 10 "$work/purge.log")"
status=$(in_root dpkg-query -W -f '${db:Status-Abbrev}' emqd 2>/dev/null || true)
case "$status" in "" | un*) ;; *) fail "dpkg says '$status' for emqd after purge" ;; esac
for gone in /etc/echomq/emqd.yaml /etc/echomq /var/lib/emqd /var/lib/private/emqd \
  /etc/systemd/system/multi-user.target.wants/emqd.service; do
  [ ! -e "$root$gone" ] && [ ! -L "$root$gone" ] || fail "$gone is still there after purge"
done
ok "purged: the configuration, the state and the unit's enablement are gone"
