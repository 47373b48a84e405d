-- What an approval offers for "allow always", and what `A` and `r` send, for each call in
-- CALLS (JSON: agent/approve params, with or without the server's `suggestedPatterns`),
-- shown through the plugin's own approval queue (no server: the params are the input).
-- KEY (`A` or `r`) is typed with nvim_input in the float; `r` accepts the offered default.
local H = dofile(vim.env.HARNESS)
local approve = require('tether.approve')
local calls = vim.json.decode(vim.env.CALLS)
H.result.offered = {}

local function ask(n)
  local params = calls[n]
  if not params then
    return H.finish('done')
  end
  H.input_answers = { '<default>' }
  local seen = {}
  table.insert(H.result.offered, seen)
  approve.ask(params, function(answer)
    seen.answer = answer
    H.later(function()
      ask(n + 1)
    end)
  end)
end

H.on('TetherApprove', function(data)
  local seen = H.result.offered[#H.result.offered]
  seen.keys = H.keys_shown(data.view)
  H.later(function()
    approve.focus()
    H.input(vim.env.KEY)
  end, 10)
end)

ask(1)
