-- The code tools answered by Neovim's own language server (basedpyright attached to the
-- buffer): the model's definition, references, hover and a file's symbols go through
-- agent/code; lib.py is not open, so the plugin loads it into a hidden buffer and attaches
-- the running basedpyright to it. At the end: every basedpyright process under this Neovim,
-- and whether one of them was started by Tether's server.
-- Env: BASEDPYRIGHT (the `basedpyright-langserver` command).
local H = dofile(vim.env.HARNESS)
H.setup()
local ws = vim.env.WORKSPACE
vim.cmd.edit(ws .. '/src/app.py')
local app = vim.api.nvim_get_current_buf()
vim.lsp.start({
  name = 'basedpyright',
  cmd = { vim.env.BASEDPYRIGHT, '--stdio' },
  root_dir = ws,
}, { bufnr = app })

--- Processes by pid: command line and parent.
local function processes()
  local out = {}
  for _, dir in ipairs(vim.fn.glob('/proc/[0-9]*', false, true)) do
    local pid = tonumber(dir:match('(%d+)$'))
    local cmd_file = io.open(dir .. '/cmdline', 'rb')
    local stat_file = io.open(dir .. '/stat', 'rb')
    if cmd_file and stat_file then
      local cmd = cmd_file:read('*a'):gsub('%z', ' ')
      local ppid = tonumber(stat_file:read('*a'):match('%) %S+ (%d+)'))
      out[pid] = { cmd = cmd, ppid = ppid }
    end
    if cmd_file then
      cmd_file:close()
    end
    if stat_file then
      stat_file:close()
    end
  end
  return out
end

--- basedpyright processes under this Neovim, each with whether Tether's server is one of
--- its ancestors.
local function language_servers()
  local all, me, found = processes(), vim.fn.getpid(), {}
  for pid, p in pairs(all) do
    if p.cmd:find('basedpyright', 1, true) then
      local under_tether, parent, mine = false, p.ppid, false
      while parent and parent > 1 and all[parent] do
        if parent == me then
          mine = true
          break
        end
        if all[parent].cmd:find('tether serve', 1, true) then
          under_tether = true
        end
        parent = all[parent].ppid
      end
      if mine then
        table.insert(found, { pid = pid, under_tether = under_tether })
      end
    end
  end
  return found
end

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.result.servers = language_servers()
  local lib = require('tether.buffers').find(vim.uri_from_fname(ws .. '/src/lib.py'))
  H.result.lib_hidden = lib ~= nil and #vim.fn.win_findbuf(lib) == 0
  H.result.lib_clients = {}
  for _, client in ipairs(lib and vim.lsp.get_clients({ bufnr = lib }) or {}) do
    table.insert(H.result.lib_clients, client.name)
  end
  H.finish('done')
end)

vim.cmd('Tether look at the code')
