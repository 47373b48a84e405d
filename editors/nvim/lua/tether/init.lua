--- Tether for Neovim: configuration and the life of the `tether serve` client.
---
--- `require('tether').setup({...})` starts the server for a file's workspace (found from
--- root markers) when the file is opened, and attaches every file buffer to it. The
--- server is an LSP server for the built-in client (`tether.client`); Tether's own messages
--- are answered by `tether.approve`, `tether.commands` (events), `tether.save` and
--- `tether.edits`.
local M = {}

---@class tether.Keymaps
---@field prompt? string|false ask for a prompt and run it (normal and visual mode)
---@field cancel? string|false cancel the latest run
---@field log? string|false open the transcript
---@field sessions? string|false pick a session and continue it
---@field approve? string|false go to the approval waiting (`:TetherApprove`)

---@class tether.ApproveKeys
---@field allow string
---@field allow_always string
---@field allow_rule string|false allow always with a rule (`pytest *`), asked with vim.ui.input
---@field deny string
---@field edit string
---@field next_hunk string|false the next change of an edit (`h`)
---@field accept_hunk string|false accept the current change (`y`)
---@field reject_hunk string|false reject the current change (`n`)

---@class tether.Config
---@field cmd? string[] the server command; default `{ 'tether', 'serve' }` when `tether` is on PATH, else the checkout's `.venv/bin/tether`
---@field cmd_env? table<string, string> extra environment of the server
---@field settings table<string, any> initializationOptions: provider, model, baseUrl, script, autoApprove, maxSteps...
---@field root_markers string[] files or folders that mark a workspace root (else the cwd)
---@field autostart boolean start the server and attach when a file buffer is opened
---@field keymaps tether.Keymaps|false
---@field approve_keys tether.ApproveKeys
---@field rule_scope 'session'|'project'|'user' where a rule picked in an approval is kept
---@field transcript { open: boolean, position: 'right'|'below'|'left'|'above', size: integer }
---@field chat { position: 'right'|'below'|'left'|'above', size: integer } where `:TetherChat` opens

---@type tether.Config
local defaults = {
  cmd = nil,
  cmd_env = nil,
  settings = {},
  root_markers = { '.git', '.hg', 'pyproject.toml', 'package.json', 'Cargo.toml', 'go.mod' },
  autostart = true,
  keymaps = {
    prompt = '<leader>tt',
    cancel = '<leader>tc',
    log = '<leader>tl',
    sessions = '<leader>ts',
    approve = '<leader>ta',
  },
  approve_keys = {
    allow = 'a',
    allow_always = 'A',
    allow_rule = 'r',
    deny = 'd',
    edit = 'e',
    next_hunk = 'h',
    accept_hunk = 'y',
    reject_hunk = 'n',
  },
  rule_scope = 'session',
  transcript = { open = true, position = 'right', size = 70 },
  chat = { position = 'right', size = 80 },
}

M.name = 'tether'
---@type tether.Config
M.config = vim.deepcopy(defaults)
M.did_setup = false

local client = require('tether.client')
M.get_client = client.get
M.start = client.start
M.ensure_client = client.ensure
M.when_ready = client.when_ready
M.request = client.request

local group = vim.api.nvim_create_augroup('tether', { clear = true })

--- The server `./dev demo` installed in the checkout this plugin is part of
--- (`<checkout>/.venv/bin/tether`), if it is there.
---@return string?
local function checkout_server()
  local here = debug.getinfo(1, 'S').source:gsub('^@', '') -- …/editors/nvim/lua/tether/init.lua
  local server = vim.fn.fnamemodify(here, ':p:h:h:h:h:h') .. '/.venv/bin/tether'
  return vim.fn.executable(server) == 1 and server or nil
end

--- The server command: the configured one, else `tether serve` from PATH, else the server
--- of this plugin's checkout.
---@return string[]? cmd
---@return string? err
function M.command()
  if M.config.cmd then
    return M.config.cmd
  end
  if vim.fn.executable('tether') == 1 then
    return { 'tether', 'serve' }
  end
  local server = checkout_server()
  if server then
    return { server, 'serve' }
  end
  return nil,
    '`tether` is not on PATH nor in this checkout\'s .venv (`./dev demo` puts it there); '
      .. 'install it or set `cmd` in require("tether").setup()'
end

--- The workspace root of a buffer: the nearest root marker, else the working directory.
---@param buf integer
---@return string
function M.root(buf)
  local root = vim.fs.root(buf, M.config.root_markers)
  return vim.fs.normalize(root or vim.fn.getcwd())
end

--- Changes the settings for later runs (`workspace/didChangeConfiguration`). A client
--- still starting gets them once initialized (`tether.client` sends them from `on_init`).
---@param settings table<string, any>
function M.configure(settings)
  M.config.settings = vim.tbl_extend('force', M.config.settings, settings)
  for _, client in ipairs(vim.lsp.get_clients({ name = M.name })) do
    if client.initialized then
      require('tether.client').send_settings(client)
    end
  end
end

--- A statusline component: what approval waits (empty when none), e.g.
--- `vim.o.statusline = "%f %{v:lua.require'tether'.statusline()}"`.
---@return string
function M.statusline()
  return package.loaded['tether.approve'] and require('tether.approve').statusline() or ''
end

local function set_keymaps()
  local keys = M.config.keymaps
  if not keys then
    return
  end
  local maps = {
    { keys.prompt, { 'n', 'x' }, 'prompt', 'run a prompt' },
    { keys.cancel, 'n', 'cancel', 'cancel the run' },
    { keys.log, 'n', 'log', 'transcript' },
    { keys.sessions, 'n', 'sessions', 'continue a session' },
  }
  for _, map in ipairs(maps) do
    if map[1] then
      vim.keymap.set(map[2], map[1], function()
        require('tether.commands')[map[3]]()
      end, { desc = 'Tether: ' .. map[4] })
    end
  end
  if keys.approve then
    vim.keymap.set('n', keys.approve, function()
      if not require('tether.approve').focus() then
        vim.notify('Tether: no approval is waiting', vim.log.levels.INFO)
      end
    end, { desc = 'Tether: go to the approval waiting' })
  end
end

--- Configures Tether. Lists (`cmd`, `root_markers`) and `settings` replace the defaults.
---@param opts? tether.Config|table
function M.setup(opts)
  opts = opts or {}
  local config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts)
  config.cmd = opts.cmd
  config.root_markers = opts.root_markers or defaults.root_markers
  config.settings = vim.tbl_extend('force', opts.settings or {}, opts.init_options or {})
  config.init_options = nil
  if opts.keymaps == false then
    config.keymaps = false
  end
  M.config = config
  M.did_setup = true
  set_keymaps()
  vim.api.nvim_clear_autocmds({ group = group })
  -- what each file's buffer was read from: a save for the agent never overwrites newer text
  local read_or_written = { 'BufReadPost', 'BufNewFile', 'BufWritePost', 'FileChangedShellPost' }
  vim.api.nvim_create_autocmd(read_or_written, {
    group = group,
    callback = function(args)
      require('tether.save').remember(args.buf, true)
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      require('tether.save').remember(buf)
    end
  end
  -- which files the user looked at last: a run's context lists the open files in that order
  vim.api.nvim_create_autocmd('BufEnter', {
    group = group,
    callback = function(args)
      require('tether.context').entered(args.buf)
    end,
  })
  require('tether.context').entered(vim.api.nvim_get_current_buf())
  if not config.autostart then
    return
  end
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach(buf)
    end
  end
end

local warned = false

--- Attaches a file buffer to the server of its workspace (starting it if needed).
---@param buf integer
function M.attach(buf)
  if not require('tether.buffers').is_file(buf) then
    return
  end
  local _, err = M.start(buf)
  if err and not warned then
    warned = true -- once, not for every file opened
    vim.notify('tether: ' .. err, vim.log.levels.ERROR)
  end
end

return M
