-- The rule "allow always with a rule" offers, for each call in CALLS (JSON: agent/approve
-- params), with the workspace as the root.
local H = dofile(vim.env.HARNESS)
local rules = require('tether.rules')
H.result.offered = {}
for _, params in ipairs(vim.json.decode(vim.env.CALLS)) do
  table.insert(H.result.offered, rules.suggest(params, vim.env.WORKSPACE) or vim.NIL)
end
H.finish('done')
