#!/bin/bash
# test_conn_nginx6.sh - issue 21 item 5a over IPv6: test_conn_nginx.sh's
# proof (nginx's access log, nstat, a capture) with surge's client on
# 2001:db8:1::2 resolving nginx's 2001:db8:1::1 by neighbour discovery;
# 4000 connections at 2000/s (the IPv4 run does the 10 000).
CONN_V6=1 exec bash "$(dirname "$0")/test_conn_nginx.sh"
