ALTER TABLE `deliveries` ADD `notify_customer_email` integer;--> statement-breakpoint
ALTER TABLE `deliveries` ADD `notify_customer_sms` integer;