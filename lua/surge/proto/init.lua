-- surge.proto - packet templates and hot-loop accessors, one module per header.

local M = {
  checksum = require "surge.proto.checksum",
  eth = require "surge.proto.eth",
  ip4 = require "surge.proto.ip4",
  udp = require "surge.proto.udp",   -- surge.proto.udp{...} builds a template
}

return M
