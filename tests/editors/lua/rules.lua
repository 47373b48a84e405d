-- "Allow always" with a rule (`r` in the approval's float, typed with nvim_input), the rule
-- applying to the next :Tether of the editor session, :TetherRules listing it, `x` revoking
-- it, and the next run asking again. Env: SCRIPTS (JSON: the script file of each run),
-- PATTERN (the rule to revoke).
local H = dofile(vim.env.HARNESS)
local scripts = vim.json.decode(vim.env.SCRIPTS)
H.setup({ settings = { script = scripts[1] } })
vim.cmd.edit(vim.env.WORKSPACE .. '/README.md')
H.result.shown = {}
H.result.runs = {}
H.result.listings = {}
H.input_answers = { '<default>' } -- the pattern `r` offers, accepted as it is
local keys = { '\\tar', '\\taa' } -- <leader>ta (go to the float), then r (rule) / a (allow)

H.on('TetherApprove', function(data)
  table.insert(H.result.shown, { run = #H.result.runs + 1, keys = H.keys_shown(data.view) })
  local key = table.remove(keys, 1)
  H.later(function()
    H.input(key)
  end, 10)
end)

local function next_run(n, prompt)
  require('tether').configure({ script = scripts[n] })
  H.later(function()
    vim.cmd('Tether ' .. prompt)
  end)
end

H.on('TetherRules', function()
  local buf = vim.api.nvim_get_current_buf()
  local listing = {
    name = vim.api.nvim_buf_get_name(buf),
    lines = H.lines(buf),
    rules = require('tether.rules').listed(),
  }
  table.insert(H.result.listings, listing)
  if #H.result.listings == 1 then -- revoke the rule: its line, then x
    for row, line in ipairs(listing.lines) do
      if line:find(vim.env.PATTERN, 1, true) then
        H.input(row .. 'Gx')
        return
      end
    end
    error('the rule is not listed')
  else
    H.input('q')
    H.when(function()
      return vim.fn.bufwinid(buf) == -1
    end, function()
      next_run(3, 'third')
    end)
  end
end)

H.on('TetherRunFinished', function(data)
  table.insert(H.result.runs, H.capture(data))
  local n = #H.result.runs
  if n == 1 then
    next_run(2, 'second')
  elseif n == 2 then
    H.later(function()
      vim.cmd('TetherRules')
    end)
  else
    H.result.transcript = require('tether.transcript').lines()
    H.finish('done')
  end
end)

vim.cmd('Tether first')
