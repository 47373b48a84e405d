;;; keys-story.el --- tether.el in an `emacs -nw' the test drives with keys  -*- lexical-binding: t; -*-

;; Environment as story.el, plus TETHER_PROXY / TETHER_PROXY_LOG (the wire recorder the
;; server runs behind), TETHER_FAKE_URL (an OpenAI-shaped fake model, or "none": OpenAI's
;; own URL; else the scripted one), TETHER_FAKE_ANTHROPIC_URL (an Anthropic-shaped one,
;; extended thinking on), TETHER_APPROVAL_TIMEOUT and TETHER_MARKDOWN_DIR (Debian's markdown-mode).  The
;; story only sets up: the test types everything, as a user would.  After each run it
;; writes the report: the user's buffer, every key typed into a buffer, which buffer was
;; selected when each approval arrived, the echo area's history, the chat and transcript.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(when (getenv "TETHER_MARKDOWN_DIR") (add-to-list 'load-path (getenv "TETHER_MARKDOWN_DIR")))
(require 'tether)
(require 'tether-chat nil t)

(run-with-timer 110 nil (lambda () (kill-emacs 3)))

(setq tether-server-command
      (list (getenv "TETHER_PYTHON") (getenv "TETHER_PROXY") (getenv "TETHER_PROXY_LOG")
            (getenv "TETHER_PYTHON") "-m" "tether" "serve"))
(setq tether-initialization-options
      (append (cond ((equal (getenv "TETHER_FAKE_URL") "none") ; OpenAI's own: a key needed
                     (list :provider "openai" :model "gpt-5.4"))
                    ((getenv "TETHER_FAKE_ANTHROPIC_URL") ; a model that thinks
                     (list :provider "anthropic" :model "claude-sonnet-5-5"
                           :baseUrl (getenv "TETHER_FAKE_ANTHROPIC_URL")
                           :reasoningEffort "medium"))
                    ((getenv "TETHER_FAKE_URL")
                     (list :provider "openai" :model "gpt-5.4"
                           :baseUrl (concat (getenv "TETHER_FAKE_URL") "/v1")))
                    (t (list :provider "scripted" :script (getenv "TETHER_SCRIPT_FILE"))))
              (list :approvalTimeoutSeconds
                    (string-to-number (or (getenv "TETHER_APPROVAL_TIMEOUT") "60")))))

(defvar keys-story-typed nil "(BUFFER . TEXT) of each key typed into a buffer.")
(defvar keys-story-selected nil "The selected buffer each time an approval was shown.")
(defvar keys-story-runs 0 "Runs finished.")
(defvar keys-story-last nil "The last result seen.")

(add-hook 'post-self-insert-hook
          (lambda ()
            (unless (minibufferp)
              (push (cons (buffer-name) (string last-command-event)) keys-story-typed))))

(advice-add 'tether--show-approval :after
            (lambda (&rest _)
              (when (tether-pending-approvals)
                (push (buffer-name (window-buffer (selected-window))) keys-story-selected))))

(defun keys-story-text (name)
  "The text of buffer NAME, or nil."
  (when (get-buffer name) (with-current-buffer name (buffer-substring-no-properties
                                                     (point-min) (point-max)))))

(defun keys-story-faces (name needles)
  "The face at each of NEEDLES (strings) in buffer NAME, as strings."
  (when (get-buffer name)
    (with-current-buffer name
      (font-lock-ensure)
      (mapcar (lambda (needle)
                (save-excursion
                  (goto-char (point-min))
                  (cons needle (if (search-forward needle nil t)
                                   (format "%s" (get-char-property (match-beginning 0) 'face))
                                 "absent"))))
              needles))))

(defun keys-story-report (app)
  "Write the report (APP is the user's buffer) atomically."
  (let ((file (getenv "TETHER_RESULT")))
    (with-temp-file (concat file ".tmp")
      (insert
       (json-encode
        `((runs . ,keys-story-runs)
          (outcome . ,(plist-get keys-story-last :outcome))
          (sessionId . ,(plist-get keys-story-last :sessionId))
          (appBuffer . ,(with-current-buffer app (buffer-string)))
          (appModified . ,(if (buffer-modified-p app) t :json-false))
          (typed . ,(vconcat (mapcar (lambda (typed) (vector (car typed) (cdr typed)))
                                     (reverse keys-story-typed))))
          (selectedAtApproval . ,(vconcat (reverse keys-story-selected)))
          (messages . ,(keys-story-text "*Messages*"))
          (transcript . ,(keys-story-text "*tether*"))
          (chat . ,(keys-story-text "*tether-chat*"))
          (chatMode . ,(when (get-buffer "*tether-chat*")
                         (with-current-buffer "*tether-chat*"
                           (vector (symbol-name major-mode)
                                   (if (featurep 'markdown-mode) t :json-false)
                                   (if (derived-mode-p 'text-mode) t :json-false)))))
          (chatFaces . ,(keys-story-faces "*tether-chat*"
                                          '("greets" "→ write_file" "✓ allow" "tether> ")))
          (transcriptMode . ,(when (get-buffer "*tether*")
                               (with-current-buffer "*tether*" (symbol-name major-mode))))
          (transcriptFaces . ,(keys-story-faces "*tether*" '("→ write_file" "■ done")))))))
    (rename-file (concat file ".tmp") file t)))

(let* ((root (file-name-as-directory (getenv "TETHER_ROOT")))
       (default-directory root)
       (app (find-file (expand-file-name "src/app.py" root))))
  (delete-other-windows)
  ;; After the terminal is set up: keys typed before that are lost.
  (add-hook 'window-setup-hook (lambda () (message "keys-story: ready")))
  (let ((finished (lambda (result)
                    (setq keys-story-last result keys-story-runs (1+ keys-story-runs))
                    (keys-story-report app))))
    (if (boundp 'tether-run-finished-functions)
        (add-hook 'tether-run-finished-functions finished)
      ;; An older tether.el: poll.  (A repeating timer makes Emacs 28 drop keys typed
      ;; in a burst right after an M-x command, while it computes its binding hint.)
      (run-with-timer 0.1 0.1 (lambda ()
                                (when (and tether-last-result
                                           (not (eq tether-last-result keys-story-last)))
                                  (funcall finished tether-last-result)))))))
