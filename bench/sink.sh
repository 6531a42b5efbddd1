#!/usr/bin/env bash
# Starts nginx as an HTTP/2 TLS sink on 127.0.0.1 that answers like APNs (200, the request's apns-id header
# echoed or a new one) after reading each request body, with a throwaway CA. Names after PORT are added to its
# certificate as DNS names. With SINK_ARRIVALS=1 it logs each request's arrival to DIR/logs/arrivals.log, one
# JSON object a line: "t" the wall-clock time in seconds ($msec, milliseconds) and "b" the request body
# (bench/peer-sygnal.sh matches pushes by the event id in their bodies).
# `certs` only writes the throwaway CA (DIR/ca.pem) and a certificate for 127.0.0.1 signed by it
# (DIR/server.pem, DIR/server.key), for a sink of one's own (bench/latency.sh); names after DIR are added to the
# certificate as DNS names (bench/peer-sygnal.sh: Apple's hosts, mapped to 127.0.0.1).
# Tokens whose path starts /3/device/dead are answered 410 Unregistered. PORT+1 (plain HTTP) is a webhook receiver:
# POST /hook answers 204 and logs each request's webhook-id to DIR/logs/hooks.log.
# Usage: bench/sink.sh start DIR PORT [DNS-NAME...] | bench/sink.sh stop DIR | bench/sink.sh certs DIR [DNS-NAME...]
set -euo pipefail
command=$1
dir=$2
certs() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=Herald bench CA" \
        -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
        -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
    local names="IP:127.0.0.1,DNS:localhost" name
    for name in "$@"; do names+=",DNS:$name"; done
    printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$names" > "$dir/ext.cnf"
    openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 1 \
        -extfile "$dir/ext.cnf" -out "$dir/server.pem" 2>/dev/null
}
case "$command" in
certs)
    shift 2
    certs "$@"
    ;;
start)
    port=$3
    shift 3
    mkdir -p "$dir/www" "$dir/logs"
    : > "$dir/www/sink"
    # nginx's workers run as an unprivileged user: they must be able to reach the sink file
    # (mktemp -d makes 0700 directories).
    chmod 755 "$dir" "$dir/www"
    chmod 644 "$dir/www/sink"
    certs "$@"
    arrivals="access_log off;"
    if [ -n "${SINK_ARRIVALS:-}" ]; then
        arrivals="access_log $dir/logs/arrivals.log arrival buffer=256k flush=100ms;"
    fi
    cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 100000000;
    http2_max_concurrent_streams 1000;
    # One buffer in memory, so \$request_body holds the whole body when the request is logged.
    client_body_buffer_size 16k;
    client_body_in_single_buffer on;
    client_body_temp_path $dir/tmp;
    proxy_temp_path $dir/tmp;
    fastcgi_temp_path $dir/tmp;
    uwsgi_temp_path $dir/tmp;
    scgi_temp_path $dir/tmp;
    log_format arrival escape=json '{"t":\$msec,"b":"\$request_body"}';
    # aioapns (Sygnal) matches each answer to its request by apns-id.
    map \$http_apns_id \$answer_apns_id { "" \$request_id; default \$http_apns_id; }
    server {
        listen 127.0.0.1:$port ssl http2;
        ssl_certificate $dir/server.pem;
        ssl_certificate_key $dir/server.key;
        root $dir/www;
        # The mirror reads the whole request body before the content phase (a bare "return" would
        # discard it, and nginx closes HTTP/2 connections that send bodies it discards as a flood). The
        # request ends in /_ok, so that is where it is logged.
        location /3/device/ {
            rewrite ^ /sink break;
            mirror /_read;
            mirror_request_body on;
            error_page 405 =200 /_ok;
        }
        # Tokens starting "dead" are gone, as APNs answers them (410 Unregistered): the broadcast with
        # dead tokens (bench/broadcast.sh, BENCH_DEAD_PERCENT).
        location /3/device/dead {
            rewrite ^ /sink break;
            mirror /_read;
            mirror_request_body on;
            error_page 405 =410 /_gone;
        }
        location = /_gone {
            internal;
            default_type application/json;
            add_header apns-id \$answer_apns_id always;
            return 410 '{"reason":"Unregistered"}';
        }
        location = /_read { internal; return 204; }
        location = /_ok {
            internal;
            $arrivals
            add_header apns-id \$answer_apns_id always;
            return 200;
        }
    }
    # A webhook receiver (bench/broadcast.sh, BENCH_WEBHOOK): answers 204 and logs each event's webhook-id.
    log_format hook '\$http_webhook_id';
    server {
        listen 127.0.0.1:$((port + 1));
        client_max_body_size 1m;
        location /hook {
            access_log $dir/logs/hooks.log hook;
            return 204;
        }
    }
}
CONF
    mkdir -p "$dir/tmp"
    nginx -c "$dir/nginx.conf" -p "$dir"
    ;;
stop)
    if [ -f "$dir/nginx.pid" ]; then kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true; fi
    ;;
esac
