-- surge.dut.view - the received-packet view's old name: it is
-- surge.proto.view, below both surge.dut and surge.conn (a library above
-- proto uses it without depending on dut). Scripts that require it by
-- this name keep working.
return require("surge.proto.view")
