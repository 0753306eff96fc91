'use strict';
// `npm pack` (prepack): copies the repository's lua/*.lua into the package,
// so a tarball carries the scripts of the checkout it was packed from.
const fs = require('node:fs');
const path = require('node:path');

const from = path.join(__dirname, '..', '..', '..', 'lua');
const to = path.join(__dirname, '..', 'lua');
const files = fs.readdirSync(from).filter((f) => f.endsWith('.lua'));
if (files.length === 0) throw new Error(`no lua/*.lua in ${from}: pack from a checkout of the repository`);
fs.mkdirSync(to, { recursive: true });
for (const f of files) fs.copyFileSync(path.join(from, f), path.join(to, f));
