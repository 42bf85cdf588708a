// speedscope_validate.js FILE SCHEMA - validate a speedscope export against
// the schema speedscope's npm package ships (draft-07, with ajv): exit 0
// when valid, 1 with every error on stderr.  Run with NODE_PATH set to the
// node_modules that holds ajv.
'use strict';
const fs = require('fs');
const Ajv = require('ajv');

const [file, schemaPath] = process.argv.slice(2);
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const data = JSON.parse(fs.readFileSync(file, 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
if (!validate(data)) {
  console.error(JSON.stringify(validate.errors, null, 1));
  process.exit(1);
}
console.log('valid');
