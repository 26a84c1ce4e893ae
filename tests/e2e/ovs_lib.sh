# ovs_lib.sh - a private Open vSwitch for a test (PEERS.md's recipe): the
# userspace datapath (no kernel module), its database, sockets and logs in
# $TMP/ovs, stopped and its bridge removed on exit. Sourced after lib.sh.
#
# ovs_start BRIDGE [SETTING...]: ovsdb-server and ovs-vswitchd, then the
# bridge (datapath_type=netdev and the `set bridge` SETTINGs, e.g.
# protocols=OpenFlow13); skips the test (77) when OVS is missing or does
# not start. OVS_OTHER_CONFIG (KEY=VALUE ...) goes into the switch's
# other_config before it starts (vlan-limit=2, read at start). Sets V
# (ovs-vsctl on this database) and OVS_DIR.
ovs_start() {
  need_cmd ovs-vswitchd
  need_cmd ovsdb-server
  need_cmd ovsdb-tool
  OVS_BR=$1
  shift
  OVS_DIR=$TMP/ovs
  export OVS_RUNDIR=$OVS_DIR OVS_DBDIR=$OVS_DIR OVS_LOGDIR=$OVS_DIR
  mkdir -p "$OVS_DIR"
  on_exit "ovs_stop"
  ovsdb-tool create "$OVS_DIR/conf.db" /usr/share/openvswitch/vswitch.ovsschema || skip "ovsdb-tool failed"
  ovsdb-server --remote="punix:$OVS_DIR/db.sock" --pidfile="$OVS_DIR/ovsdb.pid" --detach \
    --log-file="$OVS_DIR/ovsdb.log" "$OVS_DIR/conf.db" || skip "ovsdb-server does not start"
  V=(ovs-vsctl --db="unix:$OVS_DIR/db.sock")
  "${V[@]}" --no-wait init
  local kv
  for kv in ${OVS_OTHER_CONFIG:-}; do "${V[@]}" --no-wait set Open_vSwitch . "other_config:$kv"; done
  ovs-vswitchd "unix:$OVS_DIR/db.sock" --pidfile="$OVS_DIR/vsd.pid" --detach --log-file="$OVS_DIR/vsd.log" ||
    skip "ovs-vswitchd does not start"
  "${V[@]}" add-br "$OVS_BR" -- set bridge "$OVS_BR" datapath_type=netdev "$@" || skip "no netdev datapath"
}
ovs_stop() {
  local f
  for f in "$OVS_DIR/vsd.pid" "$OVS_DIR/ovsdb.pid"; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  sleep 0.3
  ip link del "$OVS_BR" 2>/dev/null
}
ovs_appctl() { ovs-appctl -t "$(ls "$OVS_DIR"/ovs-vswitchd.*.ctl)" "$@"; }
