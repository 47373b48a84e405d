-- The rule "allow always with a rule" (`r`) offers, for each call in CALLS (JSON: agent/approve
-- params), with the workspace as the root; with EXACT=1 the rule of a plain "allow always" (`A`).
local H = dofile(vim.env.HARNESS)
local rules = require('tether.rules')
H.result.offered = {}
for _, params in ipairs(vim.json.decode(vim.env.CALLS)) do
  local offered
  if vim.env.EXACT == '1' then
    offered = rules.exact(params)
  else
    offered = rules.suggest(params, vim.env.WORKSPACE)
  end
  table.insert(H.result.offered, offered or vim.NIL)
end
H.finish('done')
