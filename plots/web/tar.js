// tar.js — a POSIX ustar archive of files, written in the page so that a run downloads as
// one file that `tar xf` unpacks into the run directory `attnlab eval` and `attnlab
// report` read.
//
// Layout: per file a 512-byte header (name, mode 0644, size and mtime in octal, the
// checksum, type '0', the "ustar" magic), then its bytes padded to a multiple of 512; two
// empty blocks end the archive. A name longer than 100 bytes is split at a '/' into the
// prefix field (up to 155 bytes). Folders are implied by the names, as tar allows.
'use strict';

// tarArchive(entries) → Uint8Array; entries: [[path, Uint8Array or string], ...]
function tarArchive(entries) {
    const enc = new TextEncoder();
    const blocks = [];
    let total = 0;
    const now = Math.floor(Date.now() / 1000);
    function field(h, off, len, text) {
        const b = enc.encode(text);
        if (b.length > len)
            throw new Error('tar: field too long: ' + text);
        h.set(b, off);
    }
    function octal(n, len) { // len-1 octal digits and a NUL
        return n.toString(8).padStart(len - 1, '0');
    }
    for (const [path, data] of entries) {
        const bytes = typeof data === 'string' ? enc.encode(data) : data;
        const h = new Uint8Array(512);
        let name = path, prefix = '';
        if (enc.encode(name).length > 100) {
            const cut = path.lastIndexOf('/', path.length - 2);
            prefix = path.slice(0, cut);
            name = path.slice(cut + 1);
        }
        field(h, 0, 100, name);
        field(h, 100, 8, octal(0o644, 8));
        field(h, 108, 8, octal(0, 8));
        field(h, 116, 8, octal(0, 8));
        field(h, 124, 12, octal(bytes.length, 12));
        field(h, 136, 12, octal(now, 12));
        h.fill(32, 148, 156); // the checksum counts its own field as spaces
        h[156] = 48; // '0': a regular file
        field(h, 257, 6, 'ustar');
        field(h, 263, 2, '00');
        field(h, 345, 155, prefix);
        let sum = 0;
        for (const v of h)
            sum += v;
        field(h, 148, 8, sum.toString(8).padStart(6, '0') + '\0 ');
        blocks.push(h, bytes);
        total += 512 + bytes.length;
        const pad = (512 - bytes.length % 512) % 512;
        if (pad) {
            blocks.push(new Uint8Array(pad));
            total += pad;
        }
    }
    blocks.push(new Uint8Array(1024));
    total += 1024;
    const out = new Uint8Array(total);
    let at = 0;
    for (const b of blocks) {
        out.set(b, at);
        at += b.length;
    }
    return out;
}

if (typeof module !== 'undefined')
    module.exports = {tarArchive};
