#!/bin/bash
# test_conn_server6.sh - issue 21 item 5b over IPv6: test_conn_server.sh's
# curl (byte-exact), ab, ab -k and wrk against http-server.lua on
# 2001:db8:1::2, which answers the kernel's neighbour solicitations.
CONN_V6=1 exec bash "$(dirname "$0")/test_conn_server.sh"
