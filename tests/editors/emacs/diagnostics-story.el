;;; diagnostics-story.el --- The agent reads Flymake's problems  -*- lexical-binding: t; -*-

;; Environment as withdraw-story.el.  src/app.py is checked by Flymake with a small
;; backend (as Eglot feeds Flymake from its language server): an error on each `nme', a
;; warning on each `TODO'.  README.md is open without Flymake.  The scripted model calls
;; the `diagnostics' tool; the test reads its results on the wire.  With TETHER_LSP (a
;; language server command) and TETHER_EGLOT_DIR, Flymake is fed by a real Eglot running
;; that server instead, as users have it.

(require 'json)
(require 'flymake)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(require 'tether)

(run-with-timer 90 nil (lambda () (message "diagnostics-story.el: watchdog fired") (kill-emacs 3)))

(setq tether-server-command
      (list (getenv "TETHER_PYTHON") (getenv "TETHER_PROXY") (getenv "TETHER_PROXY_LOG")
            (getenv "TETHER_PYTHON") "-m" "tether" "serve"))
(setq tether-initialization-options
      (list :provider "scripted" :script (getenv "TETHER_SCRIPT_FILE")))

(defun story-flymake (report-fn &rest _)
  "A Flymake backend: an error on each `nme', a warning on each `TODO'."
  (let (found)
    (save-excursion
      (dolist (rule '(("nme" :error "undefined name 'nme'") ("TODO" :warning "a TODO is left")))
        (goto-char (point-min))
        (while (search-forward (car rule) nil t)
          (push (flymake-make-diagnostic (current-buffer) (match-beginning 0) (match-end 0)
                                         (nth 1 rule) (nth 2 rule))
                found))))
    (funcall report-fn found)))

(let* ((root (file-name-as-directory (getenv "TETHER_ROOT")))
       (default-directory root)
       (app (find-file (expand-file-name "src/app.py" root)))
       (deadline (+ (float-time) 60)))
  (find-file-noselect (expand-file-name "README.md" root))
  (with-current-buffer app
    (if (getenv "TETHER_LSP")
        (progn
          (add-to-list 'load-path (getenv "TETHER_EGLOT_DIR"))
          (require 'eglot)
          (require 'python)
          (setq eglot-server-programs `((python-mode . (,(getenv "TETHER_LSP") "--stdio"))))
          (python-mode)
          (apply #'eglot (eglot--guess-contact))  ; M-x eglot: turns Flymake on
          (flymake-start))
      (add-hook 'flymake-diagnostic-functions #'story-flymake nil t)
      (flymake-mode 1)
      (flymake-start))
    (while (and (null (flymake-diagnostics)) (< (float-time) deadline))
      (accept-process-output nil 0.05)))
  (tether-run "what is wrong?")
  (while (and (not tether-last-result) (< (float-time) deadline))
    (accept-process-output nil 0.05))
  (with-temp-file (getenv "TETHER_RESULT")
    (insert
     (json-encode
      `((outcome . ,(plist-get tether-last-result :outcome))
        (flymake . ,(length (with-current-buffer app (flymake-diagnostics))))))))
  (kill-emacs 0))
