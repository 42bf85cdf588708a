#!/usr/bin/env python3
"""push_receiver.py - a stand-in for a Pyroscope server's ingest endpoint,
for pytop's push tests (tests/test_push.c).

Listens on 127.0.0.1, an ephemeral port, and writes that port to PORTFILE
once it listens.  Every POST is stored in DIR as NNNN.json (method, path,
query parameters, headers, the answer given) and NNNN.body (the body as
received); NNNN counts from 0000 in order of arrival.  The first FAIL
requests are answered 500 (a server in trouble), the others 200.  With
PEM (a certificate and its key in one file) it speaks HTTPS.

Usage: push_receiver.py DIR PORTFILE [FAIL [PEM]]
"""
import http.server
import json
import os
import ssl
import sys
import urllib.parse


class Receiver(http.server.BaseHTTPRequestHandler):
    count = 0
    fail = 0
    out = "."

    def do_POST(self):
        n = Receiver.count
        Receiver.count += 1
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        url = urllib.parse.urlsplit(self.path)
        status = 500 if n < Receiver.fail else 200
        record = {
            "method": "POST",
            "path": url.path,
            "raw_query": url.query,
            "query": urllib.parse.parse_qs(url.query, keep_blank_values=True),
            "content_type": self.headers.get("Content-Type", ""),
            "length": len(body),
            "status": status,
        }
        base = os.path.join(Receiver.out, "%04d" % n)
        with open(base + ".body", "wb") as f:
            f.write(body)
        # The .json last, whole: its presence says the request is stored.
        with open(base + ".tmp", "w") as f:
            json.dump(record, f)
        os.rename(base + ".tmp", base + ".json")
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, fmt, *args):
        pass


def main():
    Receiver.out = sys.argv[1]
    Receiver.fail = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    if len(sys.argv) > 4:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[4])
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(tmp, sys.argv[2])
    server.serve_forever()


if __name__ == "__main__":
    main()
