;;; story.el --- One run through editors/emacs/tether.el in `emacs --batch'  -*- lexical-binding: t; -*-

;; Environment: TETHER_EL_DIR (editors/emacs), TETHER_PYTHON (the server's python),
;; TETHER_ROOT (the workspace), TETHER_SCRIPT_FILE (the scripted provider's script),
;; TETHER_RESULT (where the JSON report goes).  Approvals are answered on stdin, as a
;; user types them in the minibuffer.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(require 'tether)

(run-with-timer 90 nil (lambda () (message "story.el: watchdog fired") (kill-emacs 3)))

(setq tether-server-command (list (getenv "TETHER_PYTHON") "-m" "tether" "serve"))
(setq tether-initialization-options
      (list :provider "scripted" :script (getenv "TETHER_SCRIPT_FILE")))

(let* ((root (file-name-as-directory (getenv "TETHER_ROOT")))
       (default-directory root)
       (app (find-file (expand-file-name "src/app.py" root))))
  ;; The user types and does not save: the server must read this text.
  (with-current-buffer app
    (goto-char (point-max))
    (insert "UNSAVED = 1\n"))
  (tether-run "rename the constant and add a note")
  (while (not tether-last-result)
    (if (tether-pending-approvals)
        (tether-approve)  ; the user answers in the minibuffer (here: stdin)
      (accept-process-output nil 0.05)))
  (with-temp-file (getenv "TETHER_RESULT")
    (insert
     (json-encode
      `((outcome . ,(plist-get tether-last-result :outcome))
        (answer . ,(plist-get tether-last-result :answer))
        (changedFiles . ,(plist-get tether-last-result :changedFiles))
        (appBuffer . ,(with-current-buffer app (buffer-string)))
        (appModified . ,(if (buffer-modified-p app) t :json-false))
        (transcript . ,(with-current-buffer "*tether*" (buffer-string)))
        (messages . ,(with-current-buffer "*Messages*" (buffer-string)))))))
  (kill-emacs 0))
