-- A background job the model started, watched from Neovim: :TetherJobs lists the editor
-- session's jobs (vim.ui.select), choosing one opens tether://job/job-1, which follows
-- its output as the job prints it (the job waits for files the scenario writes: GO, END);
-- hidden, it stops reading, shown again it goes on; `x` in it stops the job. Env: GO (the file that lets the job print its second line).
local H = dofile(vim.env.HARNESS)
H.setup({ settings = { autoApprove = { 'bash' } } })
vim.cmd.edit(vim.env.WORKSPACE .. '/README.md')
H.result.seen = {}
H.select_answers = { 1, 1 }

local function job_buf()
  local buf = vim.fn.bufnr('tether://job/job-1')
  return buf ~= -1 and buf or nil
end

local function has(buf, text)
  for _, line in ipairs(H.lines(buf)) do
    if line == text then -- an output line (the header holds the command, which names them)
      return true
    end
  end
  return false
end

local function look(tag, buf)
  table.insert(H.result.seen, {
    tag = tag,
    lines = H.lines(buf),
    modifiable = vim.bo[buf].modifiable,
    shown = vim.fn.bufwinid(buf) ~= -1,
    polling = require('tether.jobs').polling(buf),
  })
end

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  vim.cmd('TetherJobs')
  H.when(function()
    return job_buf() ~= nil and has(job_buf(), 'line-1')
  end, function()
    local buf = assert(job_buf())
    look('first', buf)
    local go = assert(io.open(vim.env.GO, 'w'))
    go:close()
    H.when(function()
      return has(buf, 'line-2')
    end, function()
      look('second', buf)
      vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
      H.input('q') -- hidden: the reads stop; :TetherJobs shows it again and they go on
      H.when(function()
        return vim.fn.bufwinid(buf) == -1 and not require('tether.jobs').polling(buf)
      end, function()
        look('hidden', buf)
        vim.cmd('TetherJobs')
        H.when(function()
          return vim.fn.bufwinid(buf) ~= -1 and require('tether.jobs').polling(buf)
        end, function()
          look('again', buf)
          vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
          H.input('x')
          H.when(function()
            local head = H.lines(buf)[1]
            return head:find(' · stopped · ', 1, true) and not require('tether.jobs').polling(buf)
          end, function()
            look('stopped', buf)
            H.finish('done')
          end)
        end)
      end)
    end)
  end)
end)

vim.cmd('Tether start the job')
